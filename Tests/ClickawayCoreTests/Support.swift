import ClickawayCore

func rect(_ x: Int32, _ y: Int32, _ w: Int32, _ h: Int32) -> Rect { Rect(x: x, y: y, width: w, height: h) }

/// A fixed-rect popup with the defaults the README documents, open at its own rectangle.
func popup(_ name: String, _ r: Rect, parent: String? = nil, regions: [RegionSpec] = [],
           configure: (inout PopupSpec) -> Void = { _ in }) -> PopupSpec {
    var p = PopupSpec(name: name, parent: parent, source: .rect(r, output: nil), regions: regions)
    configure(&p)
    return p
}

/// An engine with the named popups open, in this order (later on top), all opened at time 0.
func engine(_ popups: [PopupSpec], exclusions: [ExclusionSpec] = [], open names: [String]? = nil) throws -> DecisionEngine {
    let model = try ClickModel(popups: popups, exclusions: exclusions)
    let engine = DecisionEngine(model: model)
    for (i, name) in (names ?? popups.map(\.name)).enumerated() {
        let index = model.popupIndex(named: name)!
        engine.open(PopupInstance(popup: index, rect: model.popups[Int(index)].fixedRect!, openedAt: 0, id: .rect(UInt64(i + 1))))
    }
    return engine
}

extension DecisionEngine {
    /// Names of the popups the last decision dismissed, sorted.
    var dismissedNames: [String] { dismissed.map { model.popups[Int($0.popup)].name }.sorted() }
    var openNames: [String] { open.map { model.popups[Int($0.popup)].name } }

    /// Press well after every grace period.
    func click(_ x: Int32, _ y: Int32, button: UInt8 = 1, at time: Int64 = 10_000) -> Decision {
        press(button: button, x: x, y: y, time: time)
    }

    func hitPath(_ x: Int32, _ y: Int32) -> [String] {
        guard let hit = hitTest(x: x, y: y) else { return [] }
        return model.regionAncestry(hit.region)
    }
}
