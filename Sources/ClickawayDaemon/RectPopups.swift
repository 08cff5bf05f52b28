internal import ClickawayControl
internal import ClickawayCore

/// The `rect` popups opened with `clickawayctl open` (and `toggle`), bottom to top, with when
/// they opened and their instance ids, which a reload keeps.
struct RectPopups {
    private var open: [(name: String, openedAt: Int64, id: InstanceID)] = []
    private var serial: UInt64 = 0

    /// `open`, `close` or `toggle` of the popup named `name`; the popup's state after it, or
    /// why not. Closing a parent closes its open children, as a dismissal would.
    mutating func set(_ name: String, open wanted: (Bool) -> Bool, model: ClickModel, outputs: [String: Rect],
                      now: Int64) -> Result<Bool, Refusal> {
        guard let index = model.popupIndex(named: name) else {
            return .failure(Refusal("no popup named \"\(name)\" in the configuration" + model.popupNameSuggestion(name)))
        }
        guard case .rect(_, let output) = model.popups[Int(index)].source else {
            return .failure(Refusal("popup \"\(name)\" is a window popup: it is open while its window is mapped, "
                                    + "so it cannot be opened or closed by name"))
        }
        let isOpen = open.contains { $0.name == name }
        let opening = wanted(isOpen)
        if opening && !isOpen {
            if let output, outputs[output] == nil {
                return .failure(Refusal("popup \"\(name)\" is placed on output \"\(output)\", which is not connected "
                                        + "(connected: \(outputs.keys.sorted().joined(separator: ", ")))"))
            }
            serial += 1
            open.append((name, now, .rect(serial)))
        } else if !opening && isOpen {
            let closing = Set([index] + model.descendants(of: index))
            open.removeAll { entry in model.popupIndex(named: entry.name).map(closing.contains) ?? true }
        }
        return .success(opening)
    }

    func isOpen(_ name: String) -> Bool { open.contains { $0.name == name } }

    /// A runtime popup of this name is gone: a configured popup that takes its name is closed.
    mutating func forget(_ name: String) { open.removeAll { $0.name == name } }

    /// A dismissal closed it.
    mutating func dismissed(_ id: InstanceID) { open.removeAll { $0.id == id } }

    /// A new configuration: popups that are no longer `rect` popups close.
    mutating func keep(in model: ClickModel) {
        open.removeAll { entry in
            guard let i = model.popupIndex(named: entry.name), case .rect = model.popups[Int(i)].source else { return true }
            return false
        }
    }

    /// The open ones as instances, placed on the current outputs.
    func instances(_ model: ClickModel, outputs: [String: Rect]) -> [PopupInstance] {
        open.compactMap { entry in
            guard let index = model.popupIndex(named: entry.name),
                  case .rect(let r, let output) = model.popups[Int(index)].source,
                  let rect = ClickModel.screenRect(r, output: output, outputs: outputs)
            else { return nil }
            return PopupInstance(popup: index, rect: rect, openedAt: entry.openedAt, id: entry.id)
        }
    }
}
