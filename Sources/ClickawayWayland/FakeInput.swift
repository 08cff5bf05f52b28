internal import CWaylandClient
internal import CWaylandProtocols

/// KWin's org_kde_kwin_fake_input: pointer motion to a global point (wl_fixed, exact),
/// buttons and touch points. While it exists KWin's seat has a pointer and touch even with
/// no devices.
///
/// KWin offers the global only to clients it trusts: the process's executable must be
/// named, with `X-KDE-Wayland-Interfaces=org_kde_kwin_fake_input`, by an installed
/// .desktop file whose `Exec=` is that executable's path; or KWin runs with
/// `KWIN_WAYLAND_NO_PERMISSION_CHECKS=1`. Either way KWin must be able to read the client's
/// `/proc/PID/exe`, which it can for processes of its own user.
public final class FakeInput: InputInjector {
    /// Kept so the connection outlives the proxy.
    private let client: WaylandClient
    private let proxy: OpaquePointer

    public init(client: WaylandClient) throws {
        guard let proxy = client.bindFakeInput() else {
            throw WaylandError.missingGlobal(interface: "org_kde_kwin_fake_input (version 3 or later)", purpose: "to replay clicks on KWin")
        }
        self.client = client
        self.proxy = proxy
        // KWin ignores every request of a device that has not said who it is.
        org_kde_kwin_fake_input_authenticate(proxy, "clickaway", "sends clicks outside popups on to what is below")
    }

    deinit {
        if org_kde_kwin_fake_input_get_version(proxy) >= 5 { org_kde_kwin_fake_input_destroy(proxy) } else { wl_proxy_destroy(proxy) }
    }

    public var protocolName: String { "org_kde_kwin_fake_input" }
    /// Touch points came in version 2.
    public var injectsTouch: Bool { org_kde_kwin_fake_input_get_version(proxy) >= 2 }

    public func move(to position: Position) throws {
        let fixed = position.fixed
        org_kde_kwin_fake_input_pointer_motion_absolute(proxy, fixed.x, fixed.y)
    }

    public func button(_ code: UInt32, pressed: Bool) {
        let state = pressed ? WL_POINTER_BUTTON_STATE_PRESSED : WL_POINTER_BUTTON_STATE_RELEASED
        org_kde_kwin_fake_input_button(proxy, code, state.rawValue)
    }

    /// KWin looks for the surface under the pointer again when an input region changes.
    public func repick() {}

    public func touchDown(_ id: UInt32, at position: Position) {
        guard injectsTouch else { return }
        let fixed = position.fixed
        org_kde_kwin_fake_input_touch_down(proxy, id, fixed.x, fixed.y)
        org_kde_kwin_fake_input_touch_frame(proxy)
    }

    public func touchUp(_ id: UInt32) {
        guard injectsTouch else { return }
        org_kde_kwin_fake_input_touch_up(proxy, id)
        org_kde_kwin_fake_input_touch_frame(proxy)
    }
}
