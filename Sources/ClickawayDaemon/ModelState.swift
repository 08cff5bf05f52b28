internal import ClickawayCore

/// The model in use and how it stands to the runtime popups as they are: the configured
/// popups followed by the runtime ones; those of its runtime popups that ended since it was
/// built (out of the engine until a model without them is in); and whether a model with the
/// runtime popups as they are now is due or being built, and for which change of them.
struct ModelState {
    /// What the engine, the display and every name lookup see.
    private(set) var model: ClickModel
    /// Popups of the model whose runtime popup ended.
    private(set) var ended: Set<Int32> = []
    /// Counts the changes of the runtime popups: a model built for an older count is dropped.
    private(set) var version = 0
    /// The runtime popups changed since the model was built: a model is due, and the display
    /// looks at these windows anew when it is swapped in.
    private(set) var stale: WindowLookup?
    /// Whether a model is being built (off the loop).
    private(set) var building = false

    init(_ model: ClickModel) { self.model = model }

    /// Whether a model with the runtime popups must be built now.
    var wantsBuild: Bool { stale != nil && !building }

    /// Whether the model has the runtime popups as they are: none ended, none due or being built.
    var isCurrent: Bool { stale == nil && !building && ended.isEmpty }

    /// The runtime popups changed: a model with them is due, whose swap looks at `lookup`'s
    /// windows, together with any change not swapped in yet.
    mutating func runtimeChanged(_ lookup: WindowLookup) {
        version += 1
        stale = switch (stale, lookup) {
        case (nil, _), (.none?, _): lookup
        case (let pending?, .none): pending
        case (.window(let a)?, .window(let b)) where a == b: lookup
        default: .all
        }
    }

    /// The runtime popup `name` ended: out of the engine now, out of the model once one is built.
    mutating func end(_ name: String) {
        if let index = model.popupIndex(named: name) { ended.insert(index) }
    }

    /// The index of `name` in the model, unless its runtime popup ended there: for a runtime
    /// popup, whether the model has it as it is registered (not one that ended, which a popup
    /// registered anew under its name since a reload began may be).
    func liveIndex(_ name: String) -> Int32? {
        guard let index = model.popupIndex(named: name), !ended.contains(index) else { return nil }
        return index
    }

    /// Whether `name` is a popup of the model whose runtime popup ended.
    func hasEnded(_ name: String) -> Bool { model.popupIndex(named: name).map(ended.contains) ?? false }

    /// A build starts; returns the change it is for.
    mutating func startBuilding() -> Int {
        building = true
        return version
    }

    /// A model built for change `built` came: the windows its swap must look at when it is
    /// still wanted, nil when the runtime popups changed since (another is due).
    mutating func takeBuilt(forChange built: Int) -> WindowLookup? {
        building = false
        guard built == version else { return nil }
        defer { stale = nil }
        return stale ?? WindowLookup.none
    }

    /// A reload replaces the configuration: a model being built for the old one is dropped
    /// when it comes.
    mutating func configurationReplaced() {
        version += 1
        stale = nil
    }

    /// Puts `fresh` in use; returns the model it replaced, held nowhere else.
    mutating func swap(to fresh: ClickModel) -> ClickModel {
        let replaced = model
        model = fresh
        ended = []
        return replaced
    }
}
