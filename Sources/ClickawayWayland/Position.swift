internal import CWaylandClient

/// A point in the global (layout) space, as exact as Wayland sends it: wl_fixed has 1/256
/// of a pixel, and a Double holds every such value exactly.
///
/// Rectangles are whole pixels, edges exclusive, so a point is inside one exactly when the
/// pixel it lies in is: x + f (0 <= f < 1) is in [a, b) for integers a, b whenever x is.
/// The decision engine, which works in pixels, is therefore given `pixel` and is exact.
public struct Position: Hashable, Sendable, CustomStringConvertible {
    public var x: Double
    public var y: Double

    public init(x: Double, y: Double) {
        self.x = x
        self.y = y
    }

    /// The top left corner of a pixel.
    public init(pixelX x: Int32, y: Int32) {
        self.init(x: Double(x), y: Double(y))
    }

    /// The pixel the point lies in.
    public var pixel: (x: Int32, y: Int32) {
        (Int32(clamping: Int64(x.rounded(.down))), Int32(clamping: Int64(y.rounded(.down))))
    }

    /// The point as wl_fixed values (rounded to the nearest 1/256 pixel).
    var fixed: (x: wl_fixed_t, y: wl_fixed_t) { (wl_fixed_from_double(x), wl_fixed_from_double(y)) }

    public var description: String { "(\(Self.format(x)), \(Self.format(y)))" }

    /// 700 or 700.5: whole pixels without a fraction.
    static func format(_ value: Double) -> String {
        value == value.rounded(.down) && abs(value) < 1e15 ? "\(Int64(value))" : "\(value)"
    }
}
