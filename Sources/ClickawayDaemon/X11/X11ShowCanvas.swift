internal import ClickawayControl
internal import ClickawayCore
internal import ClickawayX11

/// `clickawayctl show` on X: one `ShowWindow` per output the picture touches, made anew on
/// every change (the new ones mapped before the old ones go, so nothing flickers, and on
/// top of whatever was mapped since). The daemon's own windows: the window tracker never
/// counts them (`XConnection.isOwn`), and their empty input shape lets every click reach the
/// grabs, the shield or the window below unchanged.
extension X11Display: ShowCanvasProvider {
    func makeShowCanvas() throws(Refusal) -> any ShowCanvas {
        do {
            try x.requireShowWindows()
        } catch {
            throw Refusal("cannot draw on \(x.display): \(error) (clickawayctl show --svg FILE draws offline)")
        }
        return X11ShowCanvas(x: x, outputs: { [unowned self] in outputs.isEmpty ? [x.screenRect] : Array(outputs.values) })
    }
}

final class X11ShowCanvas: ShowCanvas {
    private let x: XConnection
    private let outputs: () -> [Rect]
    private var windows: [ShowWindow] = []

    init(x: XConnection, outputs: @escaping () -> [Rect]) {
        self.x = x
        self.outputs = outputs
    }

    var outputCount: Int { outputs().count }

    func draw(_ picture: ShowPicture) {
        var fresh: [ShowWindow] = []
        for output in outputs() {
            guard let bounds = picture.bounds(on: output) else { continue }
            let fills = picture.fills(on: output).map { (rect: $0.rect, colour: $0.colour) }
            if let window = try? ShowWindow(x: x, rect: bounds, fills: fills) { fresh.append(window) }
        }
        windows = fresh
    }

    func clear() { windows = [] }
}
