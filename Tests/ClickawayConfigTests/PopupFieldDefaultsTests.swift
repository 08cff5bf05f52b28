import ClickawayConfig
import ClickawayCore
import Testing

/// `PopupFields`' defaults are what a popup that sets nothing gets from the reader.
@Suite struct PopupFieldDefaultsTests {
    @Test func aPopupThatSetsNothingGetsTheTablesDefaults() throws {
        let popup = try load("[[popup]]\nname = \"p\"\nwindow = { class = \"P\" }\n").model.popups[0]
        let dismiss: String = switch popup.dismiss {
        case .close: "\"close\""
        case .unmap: "\"unmap\""
        case .kill: "\"kill\""
        case .command: "command"
        }
        let actual: [String: String] = [
            "anchors": popup.anchors.isEmpty ? "[]" : "?",
            "passthrough": "\(popup.passthrough)",
            "slop": popup.slop == .zero ? "0" : "?",
            "clip": "\(popup.clip)",
            "outside_click": "\"\(popup.outsideClick.rawValue)\"",
            "trigger": "\"\(popup.trigger.rawValue)\"",
            "buttons": "[" + popup.buttons.buttons.map(String.init).joined(separator: ", ") + "]",
            "grace_ms": "\(popup.graceMs)",
            "dismiss": dismiss,
            "escape": "\(popup.escape)",
            "escape_key": "\"\(popup.escapeKey.rawValue)\"",
            "family": "\(popup.family)",
        ]
        for field in PopupFields.all {
            guard let written = field.defaultValue else { continue }
            #expect("`" + (actual[field.key] ?? "none") + "`" == written, "the default of \(field.key)")
        }
    }
}
