import ClickawayCommandLine
import ClickawayConfig
import ClickawayCore
import ClickawaySystem

/// A decision engine for a configuration file, with the popups `--open` names open: what
/// `hit` and `show --svg` decide offline.
enum OfflineEngine {
    /// `open`: NAME (a `rect` popup) or NAME=X,Y,W,H, later ones on top, each opened at time 0;
    /// with none named and `rectPopupsByDefault`, every `rect` popup. Prints the
    /// configuration's errors and exits 1 (2 when unreadable).
    static func load(config: String?, open: [String], rectPopupsByDefault: Bool = false) throws -> DecisionEngine {
        let loaded: LoadedConfig
        do {
            loaded = try ConfigLoader.load(file: config, environment: processEnvironment())
        } catch {
            printError("\(error)")
            if case .unreadable = error { throw ExitCode(2) }
            throw ExitCode(1)
        }
        let engine = DecisionEngine(model: loaded.model)
        let open = open.isEmpty && rectPopupsByDefault ? loaded.model.popups.filter { $0.fixedRect != nil }.map(\.name) : open
        for (i, spec) in open.enumerated() {
            engine.open(try instance(spec, id: .rect(UInt64(i + 1)), model: loaded.model))
        }
        return engine
    }

    private static func instance(_ spec: String, id: InstanceID, model: ClickModel) throws -> PopupInstance {
        let parts = spec.split(separator: "=", maxSplits: 1).map(String.init)
        let name = parts[0]
        guard let index = model.popupIndex(named: name) else {
            throw ValidationError("no popup named \"\(name)\" in the configuration" + suggestion(name, model.popups.map(\.name)))
        }
        let given = parts.count == 2 ? try rectangle(parts[1], option: spec, name: name) : nil
        guard let rect = given ?? model.popups[Int(index)].fixedRect else {
            throw ValidationError("popup \"\(name)\" is a window popup: give its rectangle, e.g. --open \(name)=100,40,300,200")
        }
        return PopupInstance(popup: index, rect: rect, openedAt: 0, id: id)
    }

    private static func rectangle(_ text: String, option: String, name: String) throws -> Rect {
        let numbers = text.split(separator: ",").compactMap { Int32($0.trimming(while: \.isWhitespace)) }
        guard numbers.count == 4, numbers[2] >= 0, numbers[3] >= 0 else {
            throw ValidationError("--open \(option): the rectangle is X,Y,WIDTH,HEIGHT in pixels, e.g. \(name)=100,40,300,200")
        }
        return Rect(x: numbers[0], y: numbers[1], width: numbers[2], height: numbers[3])
    }
}
