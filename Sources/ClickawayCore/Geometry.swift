/// A rectangle in X's integer pixel space. `width`/`height` are never negative;
/// the right and bottom edges are exclusive, like X and UIKit's `CGRect.contains`.
public struct Rect: Hashable, Sendable, CustomStringConvertible {
    public var x: Int32
    public var y: Int32
    public var width: Int32
    public var height: Int32

    @inlinable
    public init(x: Int32, y: Int32, width: Int32, height: Int32) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }

    @inlinable
    public func contains(x px: Int32, y py: Int32) -> Bool {
        // Int64 so a rectangle reaching the edge of Int32 space cannot overflow.
        Int64(px) >= Int64(x) && Int64(px) < Int64(x) + Int64(width)
            && Int64(py) >= Int64(y) && Int64(py) < Int64(y) + Int64(height)
    }

    /// The rectangle grown by `insets` on each side (UIKit's `insetBy(dx: -n, dy: -n)`).
    /// Computed in 64 bits and clamped to what a Rect can hold (a width of at most 2^31 - 1):
    /// a huge slop makes a huge rectangle that still holds this one, never one that wraps
    /// around to somewhere else.
    @inlinable
    public func expanded(by insets: Insets) -> Rect {
        func span(_ low: Int64, _ high: Int64) -> (Int32, Int32) {
            let end = min(max(high, Int64(Int32.min)), Int64(Int32.max))
            let start = max(min(low, end), Int64(Int32.min), end - Int64(Int32.max))
            return (Int32(start), Int32(end - start))
        }
        let (left, width) = span(Int64(x) - Int64(insets.left), Int64(x) + Int64(self.width) + Int64(insets.right))
        let (top, height) = span(Int64(y) - Int64(insets.top), Int64(y) + Int64(self.height) + Int64(insets.bottom))
        return Rect(x: left, y: top, width: width, height: height)
    }

    /// Moved by (dx, dy), clamped to 32 bits rather than wrapped.
    @inlinable
    public func offsetBy(dx: Int32, dy: Int32) -> Rect {
        Rect(x: Int32(clamping: Int64(x) + Int64(dx)), y: Int32(clamping: Int64(y) + Int64(dy)), width: width, height: height)
    }

    public var description: String { "[\(x), \(y), \(width), \(height)]" }
}

/// Extra hit area around a region, per side.
public struct Insets: Hashable, Sendable {
    public var top: Int32
    public var right: Int32
    public var bottom: Int32
    public var left: Int32

    public init(top: Int32, right: Int32, bottom: Int32, left: Int32) {
        self.top = top
        self.right = right
        self.bottom = bottom
        self.left = left
    }

    public init(all n: Int32) { self.init(top: n, right: n, bottom: n, left: n) }

    public static let zero = Insets(all: 0)
    public var isZero: Bool { self == .zero }
}
