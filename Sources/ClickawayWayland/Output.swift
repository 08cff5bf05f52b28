internal import CWaylandClient
internal import CWaylandProtocols
public import ClickawayCore

/// An output by its registry name, stable while the output exists.
public struct OutputID: Hashable, Sendable {
    public let rawValue: UInt32
}

/// What is known of an output once the compositor has described it.
public struct OutputInfo: Hashable, Sendable, CustomStringConvertible {
    public var id: OutputID
    /// The connector name ("DP-1", "HEADLESS-1").
    public var name: String
    /// Position and size in the global (logical) coordinate space.
    public var rect: Rect

    public var description: String { "\(name) at \(rect)" }
}

/// A bound wl_output and its xdg_output. The output's position comes from xdg-output:
/// wlroots sends 0, 0 as the position in wl_output.geometry whatever the layout says.
final class Output {
    let id: OutputID
    let proxy: OpaquePointer
    private var xdgOutput: OpaquePointer?
    private let outputListener: Listener<wl_output_listener>
    private var xdgOutputListener: Listener<zxdg_output_v1_listener>?

    private var name: String?
    private var logicalPosition: (x: Int32, y: Int32)?
    private var logicalSize: (width: Int32, height: Int32)?
    /// Whether a `done` came after the values above: until then they may be half updated.
    private var isDescribed = false

    init(id: OutputID, proxy: OpaquePointer) {
        self.id = id
        self.proxy = proxy
        var functions = wl_output_listener()
        functions.geometry = { _, _, _, _, _, _, _, _, _, _ in }
        functions.mode = { _, _, _, _, _, _ in }
        functions.scale = { _, _, _ in }
        functions.done = { data, _ in owner(data, as: Output.self).isDescribed = true }
        functions.name = { data, _, name in owner(data, as: Output.self).name = String(cString: name!) }
        functions.description = { _, _, _ in }
        outputListener = Listener(functions)
        wl_output_add_listener(proxy, outputListener.pointer, Unmanaged.passUnretained(self).toOpaque())
    }

    deinit {
        if let xdgOutput { zxdg_output_v1_destroy(xdgOutput) }
        if wl_output_get_version(proxy) >= 3 { wl_output_release(proxy) } else { wl_output_destroy(proxy) }
    }

    /// Asks xdg-output for the output's logical position, size and (version 2+) name.
    func describe(with manager: OpaquePointer) {
        guard xdgOutput == nil else { return }
        let xdgOutput = zxdg_output_manager_v1_get_xdg_output(manager, proxy)!
        var functions = zxdg_output_v1_listener()
        functions.logical_position = { data, _, x, y in owner(data, as: Output.self).logicalPosition = (x, y) }
        functions.logical_size = { data, _, width, height in owner(data, as: Output.self).logicalSize = (width, height) }
        // Version 3 ends a description with wl_output.done; earlier ones with this.
        functions.done = { data, _ in owner(data, as: Output.self).isDescribed = true }
        functions.name = { data, _, name in owner(data, as: Output.self).name = String(cString: name!) }
        functions.description = { _, _, _ in }
        let listener = Listener(functions)
        zxdg_output_v1_add_listener(xdgOutput, listener.pointer, Unmanaged.passUnretained(self).toOpaque())
        self.xdgOutput = xdgOutput
        xdgOutputListener = listener
        isDescribed = false
    }

    /// Name, position and size, once all three are known.
    var info: OutputInfo? {
        guard isDescribed, let name, let logicalPosition, let logicalSize else { return nil }
        return OutputInfo(
            id: id, name: name,
            rect: Rect(x: logicalPosition.x, y: logicalPosition.y, width: logicalSize.width, height: logicalSize.height))
    }
}
