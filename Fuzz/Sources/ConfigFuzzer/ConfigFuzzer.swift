import ClickawayConfig
import ClickawayCore

/// libFuzzer's entry point: one input is one configuration file. Whatever it contains, the
/// loader must return a configuration or diagnostics, never crash, hang or run out of memory;
/// a configuration that loads must then work in the engine at any point on the screen.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let file = ConfigFile(path: "fuzz.toml", bytes: Array(UnsafeBufferPointer(start: data, count: size)))
    do {
        let config = try ConfigLoader.load([file])
        exercise(config.model)
    } catch {
        let text = error.description
        precondition(!text.isEmpty)
        if case .invalid(let diagnostics) = error {
            precondition(!diagnostics.isEmpty, "rejected without a diagnostic")
            for d in diagnostics where d.message.hasPrefix("invalid TOML") {
                precondition(d.line != nil && d.column != nil && d.sourceLine != nil, "a syntax error without a place: \(d)")
            }
        }
    }
    return 0
}

/// Opens every `rect` popup and presses at the corners and middle of each, at the edges of
/// the coordinate space, and explains a click: the arithmetic must hold for every value the
/// loader accepts.
private func exercise(_ model: ClickModel) {
    let engine = DecisionEngine(model: model, outputs: [:])
    var points: [(Int32, Int32)] = [(0, 0), (.min, .min), (.max, .max), (.min, .max)]
    for (i, popup) in model.popups.enumerated().prefix(64) {
        guard let rect = popup.fixedRect else { continue }
        engine.open(PopupInstance(popup: Int32(i), rect: rect, openedAt: 0, id: .rect(UInt64(i))))
        points += [(rect.x, rect.y), (rect.x &+ rect.width / 2, rect.y &+ rect.height / 2),
                   (rect.x &+ rect.width &- 1, rect.y &+ rect.height &- 1)]
    }
    for (x, y) in points.prefix(64) {
        _ = engine.hitTest(x: x, y: y)
        _ = engine.explain(button: 1, x: x, y: y, time: 1_000_000)
    }
    // The holes cost the square of the edges: only for configurations of a sane size.
    if model.popups.count <= 16 && model.popups.allSatisfy({ $0.regions.count <= 16 }) {
        _ = engine.holes(in: Rect(x: 0, y: 0, width: 1920, height: 1080))
    }
    _ = engine.press(button: 1, x: 5, y: 5, time: 1_000_000)
}

/// SwiftPM links an executable's `main` to `<module>_main`; this one hands over to libFuzzer's
/// driver, which parses the usual libFuzzer options.
@_cdecl("ConfigFuzzer_main")
public func fuzzerMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> Int32 {
    var count = argc
    var arguments: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = argv
    return LLVMFuzzerRunDriver(&count, &arguments) { data, size in fuzzOneInput(data!, size) }
}

@_silgen_name("LLVMFuzzerRunDriver")
private func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<Int32>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32) -> Int32
