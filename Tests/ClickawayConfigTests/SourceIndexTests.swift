@testable import ClickawayConfig
import Testing

@Suite struct SourceIndexTests {
    /// "line:column+length" of `token` at `path`, or nil.
    func position(_ index: SourceIndex, _ path: String, _ token: SourceIndex.Token = .value) -> String? {
        guard let entry = index.entries.first(where: { $0.key.description == path }) else { return nil }
        let span = token == .key ? entry.value.key : entry.value.value
        return span.map { "\($0.line):\($0.column)+\($0.length)" }
    }

    @Test func arraysOfTablesCountPerParentInstance() {
        let index = SourceIndex(text: """
            [[popup]]
            name = "a"
            [[popup]]
            name = "b"
            [[popup.region]]
            rect = [0, 0, 1, 1]
            [[popup]]
            name = "c"
            [[popup.region]]
            name = "r0"
            [[popup.region]]
            name = "r1"
            [[popup.region.region]]
            rect = [1, 2, 3, 4]
            [popup.window]
            class = "x"
            """)
        #expect(position(index, "popup[0]") == "1:1+9")
        #expect(position(index, "popup[0]", .key) == "1:3+5")
        #expect(position(index, "popup[1].region[0].rect") == "6:8+12")
        #expect(position(index, "popup[2].name") == "8:8+3")
        #expect(position(index, "popup[2].region[1].name") == "12:8+4")
        #expect(position(index, "popup[2].region[1].region[0].rect", .key) == "14:1+4")
        #expect(position(index, "popup[2].region[1].region[0].rect[3]") == "14:18+1")
        #expect(position(index, "popup[2].window.class", .key) == "16:1+5")
    }

    @Test func inlineTablesArraysAndDottedKeys() {
        let index = SourceIndex(text: """
            [[popup]]
            window = { class = "a", type = "dock" }
            anchors = [
              { rect = [1, 2, 3, 4] },  # first
              { window = { title = "t" } },
            ]
            dismiss.command = ["eww", "close"]
            "quoted key" = 1
            'literal.key' = { "inner" = true }
            """)
        #expect(position(index, "popup[0].window", .key) == "2:1+6")
        #expect(position(index, "popup[0].window") == "2:10+30")
        #expect(position(index, "popup[0].window.type", .key) == "2:25+4")
        #expect(position(index, "popup[0].anchors") == "3:11+1")
        #expect(position(index, "popup[0].anchors[0].rect[2]") == "4:19+1")
        #expect(position(index, "popup[0].anchors[1]") == "5:3+28")
        #expect(position(index, "popup[0].anchors[1].window.title") == "5:24+3")
        #expect(position(index, "popup[0].dismiss", .key) == "7:1+7")
        #expect(position(index, "popup[0].dismiss.command[1]") == "7:27+7")
        #expect(position(index, "popup[0].\"quoted key\"", .key) == "8:1+12")
        #expect(position(index, "popup[0].\"literal.key\".inner") == "9:29+4")
    }

    @Test func stringsAndCommentsDoNotLookLikeStructure() {
        let index = SourceIndex(text: """
            # [[popup]] in a comment
            [settings]
            backend = "a \\" [[popup]] # = "  # trailing [x]
            log_level = '''
            [[popup]]
            not = a key'''
            text = \"\"\"
            still a string \\\"\"\" ""\"\"\"
            after = 'c:\\path'
            """)
        #expect(position(index, "popup") == nil)
        #expect(position(index, "settings.backend") == "3:11+21")
        #expect(position(index, "settings.log_level") == "4:13+1")
        #expect(position(index, "settings.not") == nil)
        #expect(position(index, "settings.after") == "9:9+9")
    }

    @Test func unknownPathsFallBackToTheNearestEnclosingKey() {
        let index = SourceIndex(text: "[defaults]\ngrace_ms = 1\n")
        let path = TOMLPath.root.appending("defaults").appending("missing")
        #expect(index.span(of: path, .value) == SourceSpan(line: 1, column: 1, length: 10))
        #expect(index.span(of: TOMLPath.root.appending("elsewhere"), .value) == nil)
    }

    @Test func columnsCountUnicodeScalars() {
        let index = SourceIndex(text: "[[popup]]\nwindow = { title = \"é\", class = \"日本\" }\n")
        #expect(position(index, "popup[0].window.class", .key) == "2:25+5")
        #expect(position(index, "popup[0].window.class") == "2:33+4")
    }
}
