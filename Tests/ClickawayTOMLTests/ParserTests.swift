import ClickawayTOML
import Testing

@Suite struct ParserTests {
    @Test(arguments: ["plain", "quote \" and backslash \\", "line\nbreak\r\n\ttab", "\u{0}\u{1F}\u{7F}\u{85}",
                      "bidi \u{202E}override\u{2028}\u{2029}", "é 日本 🐚", ""])
    func writtenStringsReadBackTheSame(_ text: String) throws {
        let document = try TOMLDocument.parse("s = \(tomlString(text))\n")
        #expect(document.root["s"]?.string == text)
    }

    @Test func writtenStringsEscapeControlAndFormatCharactersAndKeepTheRest() {
        #expect(tomlString("a \"b\" \\ \u{202E}é\u{1}\t🐚\u{E0001}")
                == #""a \"b\" \\ \u202Eé\u0001\t🐚\U000E0001""#)
    }

    @Test func everyTableKeyAndValueKnowsWhereItIsWritten() throws {
        let document = try TOMLDocument.parse("""
            [[popup]]
            name = "a"
            window = { class = "日本", type = "dock" }
            anchors = [
              { rect = [1, 2, 3, 4] },
            ]
            [popup.x.y]
            """)
        let popup = try #require(document.root["popup"]?.element(0))
        #expect(popup.span == SourceSpan(line: 1, column: 1, length: 9))
        #expect(document.root["popup"]?.keySpan == SourceSpan(line: 1, column: 3, length: 5))
        let window = try #require(popup["window"])
        // Columns and lengths count Unicode scalars: 日本 is two, not six.
        #expect(window.span == SourceSpan(line: 3, column: 10, length: 31))
        #expect(window["type"]?.keySpan == SourceSpan(line: 3, column: 26, length: 4))
        #expect(window["type"]?.span == SourceSpan(line: 3, column: 33, length: 6))
        #expect(popup["anchors"]?.span == SourceSpan(line: 4, column: 11, length: 1), "over several lines: its first character")
        #expect(popup["anchors"]?.element(0)?["rect"]?.element(2)?.span == SourceSpan(line: 5, column: 19, length: 1))
        // A table only implied by a deeper header is placed at its first mention.
        #expect(popup["x"]?.span == SourceSpan(line: 7, column: 8, length: 1))
        #expect(popup["x"]?["y"]?.span == SourceSpan(line: 7, column: 1, length: 11))
    }

    @Test func tablesOfManyKeysAreFoundLikeSmallOnes() throws {
        let text = (0..<50).map { "k\($0) = \($0)" }.joined(separator: "\n")
        let document = try TOMLDocument.parse(text)
        for i in 0..<50 { #expect(document.root["k\(i)"]?.integer == Int64(i)) }
        #expect(document.root["k50"] == nil)
        #expect(document.root.keys.count == 50)
        #expect(throws: TOMLError.self) { try TOMLDocument.parse(text + "\nk37 = 1") }
    }

    @Test func aFileOverTheLimitIsRefusedWithoutAPlace() {
        #expect(throws: TOMLError(span: nil, message: "the file has 11 bytes; a configuration file may have at most 10 (0 MiB)")) {
            try TOMLDocument.parse("a = 123456\n", limits: TOMLLimits(maxBytes: 10))
        }
    }
}
