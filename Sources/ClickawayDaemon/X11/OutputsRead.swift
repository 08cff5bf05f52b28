internal import ClickawayCore
internal import ClickawayX11

/// The screen's size and outputs read again after RandR said they changed, by requests whose
/// replies are collected as they come, between events: the loop never waits for them. The
/// root's geometry and the screen's resources first, then every output's info, then the
/// CRTCs of those that show something.
final class OutputsRead {
    /// The screen's rectangle and its active outputs by name, or why they could not be read.
    typealias Outcome = Result<(screen: Rect, outputs: [String: Rect]), XError>

    private enum Stage {
        case screen(Batch<WindowGeometry>, Batch<ScreenResources>)
        case outputs(Rect, timestamp: UInt32, Batch<OutputInfo>)
        case crtcs(Rect, active: [OutputInfo], Batch<Rect>)
        case done(Outcome)
    }

    private let x: XConnection
    private var stage: Stage

    init(x: XConnection) {
        self.x = x
        stage = .screen(Batch([x.sendGeometry(x.root)]), Batch([x.sendScreenResources()]))
    }

    /// Takes the read as far as the replies that have come allow, sending the next requests
    /// (not flushed); the screen's rectangle and its active outputs once all are in. `wait`:
    /// to the end, waiting for the replies (at start, before the loop).
    func advance(wait: Bool = false) -> Outcome? {
        while true {
            switch stage {
            case .screen(let geometry, let resources):
                guard geometry.collect(x, wait: wait) && resources.collect(x, wait: wait) else { return nil }
                switch (geometry.results[0], resources.results[0]) {
                case (.success(let root), .success(let screen)):
                    let rect = Rect(x: 0, y: 0, width: root.rect.width, height: root.rect.height)
                    stage = .outputs(rect, timestamp: screen.timestamp,
                                     Batch(screen.outputs.map { x.sendOutputInfo($0, at: screen.timestamp) }))
                case (.failure(let error), _), (_, .failure(let error)):
                    stage = .done(.failure(error))
                }
            case .outputs(let rect, let timestamp, let infos):
                guard infos.collect(x, wait: wait) else { return nil }
                do throws(XError) {
                    let active = try infos.results.map { result throws(XError) in try result.get() }.filter(\.isActive)
                    stage = .crtcs(rect, active: active, Batch(active.map { x.sendCrtcRect($0.crtc, at: timestamp) }))
                } catch {
                    stage = .done(.failure(error))
                }
            case .crtcs(let rect, let active, let rects):
                guard rects.collect(x, wait: wait) else { return nil }
                do throws(XError) {
                    let shown = try rects.results.map { result throws(XError) in try result.get() }
                    stage = .done(.success((rect, OutputInfo.rectangles(active, shown))))
                } catch {
                    stage = .done(.failure(error))
                }
            case .done(let result):
                return result
            }
        }
    }

    /// A later change makes this read moot: the replies still to come are dropped.
    func discard() {
        switch stage {
        case .screen(let geometry, let resources):
            geometry.discard(x)
            resources.discard(x)
        case .outputs(_, _, let infos): infos.discard(x)
        case .crtcs(_, _, let rects): rects.discard(x)
        case .done: break
        }
    }
}
