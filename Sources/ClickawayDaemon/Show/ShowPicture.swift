internal import ClickawayCore

/// What `clickawayctl show` draws, as solid rectangles in screen coordinates, later ones on
/// top: the outline of each drawn popup's regions (dashed: passthrough, dotted: redirect), a
/// thinner one for the slop around them, anchors, exclusions, the windows of a popup's
/// family, the edges of the holes where clicks never reach the daemon, and a label with each
/// popup's and region's name. Every line lies inside the rectangle it outlines, so the
/// picture covers nothing outside the hit areas, anchors and exclusions. Each display paints
/// the rectangles and makes everything else transparent.
struct ShowPicture: Equatable {
    struct Fill: Equatable {
        var rect: Rect
        /// 0xRRGGBB.
        var colour: UInt32
    }

    var fills: [Fill] = []

    var isEmpty: Bool { fills.isEmpty }

    /// The fills on `output`, clipped to it.
    func fills(on output: Rect) -> [Fill] {
        fills.compactMap { f in Self.intersection(f.rect, output).map { Fill(rect: $0, colour: f.colour) } }
    }

    /// The smallest rectangle holding every fill on `output`.
    func bounds(on output: Rect) -> Rect? {
        let parts = fills(on: output)
        guard let first = parts.first?.rect else { return nil }
        var b = Edges(first)
        for p in parts.dropFirst() {
            let q = Edges(p.rect)
            b = Edges(minX: min(b.minX, q.minX), minY: min(b.minY, q.minY), maxX: max(b.maxX, q.maxX), maxY: max(b.maxY, q.maxY))
        }
        return b.rect
    }

    /// A rectangle by its edges, without overflow.
    struct Edges {
        var minX: Int64, minY: Int64, maxX: Int64, maxY: Int64
        init(minX: Int64, minY: Int64, maxX: Int64, maxY: Int64) {
            (self.minX, self.minY, self.maxX, self.maxY) = (minX, minY, maxX, maxY)
        }
        init(_ r: Rect) {
            self.init(minX: Int64(r.x), minY: Int64(r.y), maxX: Int64(r.x) + Int64(r.width), maxY: Int64(r.y) + Int64(r.height))
        }
        var rect: Rect {
            Rect(x: Int32(clamping: minX), y: Int32(clamping: minY), width: Int32(clamping: maxX - minX), height: Int32(clamping: maxY - minY))
        }
    }

    static func intersection(_ a: Rect, _ b: Rect) -> Rect? {
        let p = Edges(a), q = Edges(b)
        let e = Edges(minX: max(p.minX, q.minX), minY: max(p.minY, q.minY), maxX: min(p.maxX, q.maxX), maxY: min(p.maxY, q.maxY))
        return e.minX < e.maxX && e.minY < e.maxY ? e.rect : nil
    }

    enum Colour {
        static let anchor: UInt32 = 0x20C040
        static let exclusion: UInt32 = 0xA0A0A0
        static let hole: UInt32 = 0x00E0E0
        static let labelBackground: UInt32 = 0x101010
        /// One of eight hues per popup, in configuration order (the SVG's).
        static func popup(_ index: Int) -> UInt32 {
            [0x3070D0, 0xD08020, 0x8040C0, 0x20A0A0, 0xC03080, 0x709020, 0x4050A0, 0xA06040][index % 8]
        }
    }

    enum Line { case solid, dashed, dotted }

    /// The picture of `engine`'s open popups (those named in `popups`, every one when it is
    /// empty), with their anchors and family windows, the exclusions, and the `holes` given.
    init(_ engine: DecisionEngine, popups: Set<String>, holes: [Rect]) {
        let model = engine.model
        let wanted: (Int32) -> Bool = { popups.isEmpty || popups.contains(model.popups[Int($0)].name) }
        // An anchor counts only while its popup is open.
        let open = Set(engine.open.map(\.popup))
        for h in Self.unionEdges(holes) { fills.append(Fill(rect: h, colour: Colour.hole)) }
        for area in engine.configAreas + engine.windowAreas {
            switch area.kind {
            case .exclusion: outline(area.rect, colour: Colour.exclusion, width: 2, .solid)
            case .anchor(let popup) where wanted(popup) && open.contains(popup):
                outline(area.rect, colour: Colour.anchor, width: 2, .solid)
                label(model.popups[Int(popup)].name + " anchor", in: area.rect, colour: Colour.anchor)
            case .member(_, let popup, _) where wanted(popup):
                outline(area.rect, colour: Colour.popup(Int(popup)), width: 1, .dashed)
            default: break
            }
        }
        // Each open popup's outlines, bottom popup first: slop, then the regions, then names.
        let outlines = engine.regionOutlines().filter { wanted($0.popup) }
        for o in outlines where o.hitArea != o.rect {
            outline(o.hitArea, colour: Colour.popup(Int(o.popup)), width: 1, .dotted)
        }
        for o in outlines {
            outline(o.rect, colour: Colour.popup(Int(o.popup)), width: o.isPopup ? 3 : 2,
                    o.passthrough ? .dashed : o.redirects ? .dotted : .solid)
        }
        for o in outlines {
            // The popup's name top right, its regions' top left: a region at the popup's top
            // left corner does not hide it.
            label(o.isPopup ? model.popups[Int(o.popup)].name : o.path, in: o.rect, inset: o.isPopup ? 3 : 2,
                  colour: Colour.popup(Int(o.popup)), right: o.isPopup)
        }
    }

    /// A frame `width` pixels thick just inside `r`.
    private mutating func outline(_ r: Rect, colour: UInt32, width: Int32, _ line: Line) {
        guard r.width > 0, r.height > 0 else { return }
        let w = min(width, r.width, r.height)
        edge(Rect(x: r.x, y: r.y, width: r.width, height: w), colour, line, horizontal: true)
        edge(Rect(x: r.x, y: r.y + r.height - w, width: r.width, height: w), colour, line, horizontal: true)
        edge(Rect(x: r.x, y: r.y, width: w, height: r.height), colour, line, horizontal: false)
        edge(Rect(x: r.x + r.width - w, y: r.y, width: w, height: r.height), colour, line, horizontal: false)
    }

    private mutating func edge(_ r: Rect, _ colour: UInt32, _ line: Line, horizontal: Bool) {
        let (on, off): (Int32, Int32) = switch line {
        case .solid: (horizontal ? r.width : r.height, 0)
        case .dashed: (8, 4)
        case .dotted: (2, 2)
        }
        let length = horizontal ? r.width : r.height
        var at: Int32 = 0
        while at < length {
            let run = min(on, length - at)
            fills.append(Fill(rect: horizontal ? Rect(x: r.x + at, y: r.y, width: run, height: r.height)
                                               : Rect(x: r.x, y: r.y + at, width: r.width, height: run), colour: colour))
            at += on + off
        }
        // A pattern ends on a dash too: the corners are always drawn.
        if off > 0 && (length - 1) % (on + off) >= on {
            let run = min(on, length)
            fills.append(Fill(rect: horizontal ? Rect(x: r.x + length - run, y: r.y, width: run, height: r.height)
                                               : Rect(x: r.x, y: r.y + length - run, width: r.width, height: run), colour: colour))
        }
    }

    /// The name in the top left (or right) corner of `r`, on a dark box, cut to fit inside `r`.
    private mutating func label(_ text: String, in r: Rect, inset: Int32 = 2, colour: UInt32, right: Bool = false) {
        let room = r.width - 2 * inset - 2
        guard room >= BitmapFont.glyphWidth, r.height >= BitmapFont.glyphHeight + 2 * inset + 2 else { return }
        let fitting = Int(max(0, (room + 1) / BitmapFont.advance))
        let shown = String(text.prefix(fitting))
        let width = BitmapFont.width(of: shown) + 2
        let box = Rect(x: right ? r.x + r.width - inset - width : r.x + inset, y: r.y + inset, width: width, height: BitmapFont.glyphHeight + 2)
        fills.append(Fill(rect: box, colour: Colour.labelBackground))
        let ink = Self.lighter(colour)
        for run in BitmapFont.runs(shown, x: box.x + 1, y: box.y + 1, maxWidth: box.width) {
            fills.append(Fill(rect: run, colour: ink))
        }
    }

    /// The colour halfway to white: readable on the dark label box.
    private static func lighter(_ c: UInt32) -> UInt32 {
        let r = ((c >> 16) & 0xFF + 0xFF) / 2, g = ((c >> 8) & 0xFF + 0xFF) / 2, b = (c & 0xFF + 0xFF) / 2
        return r << 16 | g << 8 | b
    }

    /// The outline (one pixel, inside) of the union of disjoint rectangles: each edge of
    /// each rectangle less the parts another rectangle continues across.
    static func unionEdges(_ rects: [Rect]) -> [Rect] {
        var out: [Rect] = []
        for r in rects where r.width > 0 && r.height > 0 {
            let b = Edges(r)
            // Top and bottom: the spans of x not covered by a rectangle just above (below).
            for (y, neighbourEdge) in [(b.minY, { (o: Edges) in o.maxY == b.minY }), (b.maxY - 1, { (o: Edges) in o.minY == b.maxY })] {
                let covered = rects.map(Edges.init).filter(neighbourEdge).map { ($0.minX, $0.maxX) }
                for (from, to) in subtract(covered, from: (b.minX, b.maxX)) {
                    out.append(Rect(x: Int32(from), y: Int32(y), width: Int32(to - from), height: 1))
                }
            }
            for (x, neighbourEdge) in [(b.minX, { (o: Edges) in o.maxX == b.minX }), (b.maxX - 1, { (o: Edges) in o.minX == b.maxX })] {
                let covered = rects.map(Edges.init).filter(neighbourEdge).map { ($0.minY, $0.maxY) }
                for (from, to) in subtract(covered, from: (b.minY, b.maxY)) {
                    out.append(Rect(x: Int32(x), y: Int32(from), width: 1, height: Int32(to - from)))
                }
            }
        }
        return out
    }

    /// `span` less every interval in `covered`, as sorted disjoint intervals.
    private static func subtract(_ covered: [(Int64, Int64)], from span: (Int64, Int64)) -> [(Int64, Int64)] {
        var pieces = [span]
        for (lo, hi) in covered {
            pieces = pieces.flatMap { p -> [(Int64, Int64)] in
                guard lo < p.1 && hi > p.0 else { return [p] }
                return [(p.0, lo), (hi, p.1)].filter { $0.0 < $0.1 }
            }
        }
        return pieces
    }
}
