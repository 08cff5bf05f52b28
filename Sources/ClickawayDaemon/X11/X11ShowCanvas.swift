internal import ClickawayControl
internal import ClickawayCore
internal import ClickawayX11

/// `clickawayctl show` on X: one `ShowWindow` per output the picture touches, made anew on
/// every change (the new ones mapped before the old ones go, so nothing flickers, and on
/// top of whatever was mapped since). The daemon's own windows: the window tracker never
/// counts them (`XConnection.isOwn`), and their empty input shape lets every click reach the
/// grabs, the shield or the window below unchanged. While it draws, Escape is grabbed on the root (`intercept(_:showing:)`) and ends the drawing.
final class X11ShowCanvas: ShowCanvas {
    private unowned let display: X11Display
    private var windows: [ShowWindow] = []

    init(display: X11Display) {
        self.display = display
    }

    private var x: XConnection { display.x }

    private func outputs() -> [Rect] { display.outputs.isEmpty ? [x.screenRect] : Array(display.outputs.values) }

    var outputCount: Int { outputs().count }

    func draw(_ picture: ShowPicture) {
        var fresh: [ShowWindow] = []
        for output in outputs() {
            guard let bounds = picture.bounds(on: output) else { continue }
            let fills = picture.fills(on: output).map { (rect: $0.rect, colour: $0.colour) }
            fresh.append(ShowWindow(x: x, rect: bounds, fills: fills))
        }
        windows = fresh
    }

    func clear() { windows = [] }
}
