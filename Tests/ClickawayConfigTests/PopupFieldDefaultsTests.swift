import ClickawayConfig
import ClickawayCore
import Testing

/// `PopupFields`' defaults are what a popup that sets nothing gets from the reader, and what
/// `PopupSpec`'s initializer (the core's tests and runtime popups start from it) gives.
@Suite struct PopupFieldDefaultsTests {
    @Test func aPopupThatSetsNothingGetsTheTablesDefaults() throws {
        let popup = try load("[[popup]]\nname = \"p\"\nwindow = { class = \"P\" }\n").model.popups[0]
        // The keys read by code of their own; the rows' keys, by their rows.
        let actual: [String: String] = [
            "anchors": popup.anchors.isEmpty ? "[]" : "?",
            "passthrough": "\(popup.passthrough)",
            "slop": popup.slop == .zero ? "0" : "?",
            "clip": "\(popup.clip)",
        ]
        for field in PopupFields.all where !field.inherited {
            guard let written = field.defaultValue else { continue }
            #expect("`" + (actual[field.key] ?? "none") + "`" == written, "the default of \(field.key)")
        }
        let bare = PopupSpec(name: "p", source: popup.source)
        #expect(popup == bare)
        for row in PopupFields.options {
            #expect(PopupOptions([row.key: row.defaultValue]).applied(to: bare) == bare, "the default of \(row.key)")
        }
    }
}
