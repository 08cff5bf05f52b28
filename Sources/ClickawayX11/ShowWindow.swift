internal import CXCB
public import ClickawayCore

/// A window that only shows a picture, for `clickawayctl show`: override-redirect (no window
/// manager frames or moves it), mapped on top, painted by the server from its background
/// pixmap (so exposures need nothing from us), cut by a SHAPE bounding region to the pixels
/// drawn (everything else stays see-through without a compositor), and an empty input
/// shape, so that every click and every motion goes to what is below, as if it were not
/// there. Destroyed, with its pixmap and regions, when the object goes.
public final class ShowWindow {
    private let x: XConnection
    public let window: WindowID
    private let pixmap: UInt32
    private let shape: UInt32
    private let nothing: UInt32

    /// Draws `fills` (screen coordinates, 0xRRGGBB, later on top) in a window over `rect`
    /// and maps it. Needs SHAPE and XFixes 2, asked for once by whoever makes it. Requests
    /// only: what the server refuses comes as an error event.
    public init(x: XConnection, rect: Rect, fills: [(rect: Rect, colour: UInt32)]) {
        self.x = x
        let c = x.c
        let format = x.rootFormat
        window = x.generateID()
        pixmap = x.generateID()
        shape = x.generateID()
        nothing = x.generateID()
        let width = UInt16(clamping: max(1, rect.width)), height = UInt16(clamping: max(1, rect.height))
        xcb_create_pixmap(c, format.depth, pixmap, x.root, width, height)
        let gc = x.generateID()
        xcb_create_gc(c, gc, pixmap, 0, nil)
        var local: [xcb_rectangle_t] = []
        local.reserveCapacity(fills.count)
        // Runs of one colour in one request each, in order.
        var start = 0
        while start < fills.count {
            var end = start
            local.removeAll(keepingCapacity: true)
            while end < fills.count && fills[end].colour == fills[start].colour {
                local.append(Self.rectangle(fills[end].rect, minus: rect))
                end += 1
            }
            var pixel = format.pixel(fills[start].colour)
            xcb_change_gc(c, gc, XCB_GC_FOREGROUND.rawValue, &pixel)
            xcb_poly_fill_rectangle(c, pixmap, gc, UInt32(local.count), local)
            start = end
        }
        xcb_free_gc(c, gc)
        let all = fills.map { Self.rectangle($0.rect, minus: rect) }
        xcb_xfixes_create_region(c, shape, UInt32(all.count), all)
        xcb_xfixes_create_region(c, nothing, 0, nil)
        // Value list in mask-bit order: BACK_PIXMAP, BORDER_PIXEL, OVERRIDE_REDIRECT, SAVE_UNDER.
        let values: [UInt32] = [pixmap, 0, 1, 0]
        let mask = XCB_CW_BACK_PIXMAP.rawValue | XCB_CW_BORDER_PIXEL.rawValue | XCB_CW_OVERRIDE_REDIRECT.rawValue
            | XCB_CW_SAVE_UNDER.rawValue
        xcb_create_window(
            c, format.depth, window, x.root, Int16(clamping: rect.x), Int16(clamping: rect.y), width, height, 0,
            UInt16(XCB_WINDOW_CLASS_INPUT_OUTPUT.rawValue), format.visual, mask, values)
        xcb_xfixes_set_window_shape_region(c, window, UInt8(XCB_SHAPE_SK_BOUNDING.rawValue), 0, 0, shape)
        xcb_xfixes_set_window_shape_region(c, window, UInt8(XCB_SHAPE_SK_INPUT.rawValue), 0, 0, nothing)
        xcb_map_window(c, window)
    }

    deinit {
        xcb_destroy_window(x.c, window)
        xcb_free_pixmap(x.c, pixmap)
        xcb_xfixes_destroy_region(x.c, shape)
        xcb_xfixes_destroy_region(x.c, nothing)
    }

    private static func rectangle(_ r: Rect, minus origin: Rect) -> xcb_rectangle_t {
        xcb_rectangle_t(x: Int16(clamping: r.x - origin.x), y: Int16(clamping: r.y - origin.y),
                        width: UInt16(clamping: max(0, r.width)), height: UInt16(clamping: max(0, r.height)))
    }
}

/// The root window's depth and visual, and how its pixels hold red, green and blue.
struct PixelFormat {
    var depth: UInt8
    var visual: UInt32
    var red: UInt32, green: UInt32, blue: UInt32

    /// 0xRRGGBB as a pixel of this visual (TrueColor and DirectColor; else black or white).
    func pixel(_ rgb: UInt32) -> UInt32 {
        guard red != 0, green != 0, blue != 0 else { return rgb & 0x808080 == 0 ? 0 : (1 << UInt32(min(depth, 31))) &- 1 }
        return Self.scale((rgb >> 16) & 0xFF, red) | Self.scale((rgb >> 8) & 0xFF, green) | Self.scale(rgb & 0xFF, blue)
    }

    private static func scale(_ value: UInt32, _ mask: UInt32) -> UInt32 {
        let shift = UInt32(mask.trailingZeroBitCount)
        let bits = UInt32((mask >> shift).nonzeroBitCount)
        let scaled = bits >= 8 ? value << (bits - 8) : value >> (8 - bits)
        return (scaled << shift) & mask
    }
}

extension XConnection {
    var rootFormat: PixelFormat {
        var roots = xcb_setup_roots_iterator(xcb_get_setup(c))
        while roots.rem > 0 {
            let screen = roots.data.pointee
            if screen.root == root {
                var format = PixelFormat(depth: screen.root_depth, visual: screen.root_visual, red: 0, green: 0, blue: 0)
                var depths = xcb_screen_allowed_depths_iterator(roots.data)
                while depths.rem > 0 {
                    var visuals = xcb_depth_visuals_iterator(depths.data)
                    while visuals.rem > 0 {
                        let v = visuals.data.pointee
                        if v.visual_id == screen.root_visual && (v._class == UInt8(XCB_VISUAL_CLASS_TRUE_COLOR.rawValue)
                                                                  || v._class == UInt8(XCB_VISUAL_CLASS_DIRECT_COLOR.rawValue)) {
                            (format.red, format.green, format.blue) = (v.red_mask, v.green_mask, v.blue_mask)
                        }
                        xcb_visualtype_next(&visuals)
                    }
                    xcb_depth_next(&depths)
                }
                return format
            }
            xcb_screen_next(&roots)
        }
        return PixelFormat(depth: 0, visual: UInt32(XCB_COPY_FROM_PARENT), red: 0, green: 0, blue: 0)
    }
}
