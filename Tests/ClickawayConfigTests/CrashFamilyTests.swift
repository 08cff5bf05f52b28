import ClickawayConfig
import Testing

/// Every family of input that crashed, hung or bloated the toml++-based loader, exactly as
/// found: each is now one error with file, line and column. (How fast: BENCHMARKS.md.)
@Suite struct CrashFamilyTests {
    /// The one diagnostic for `text`, which must have a place and a caret.
    func only(_ text: String) -> Diagnostic? {
        let found = diagnostics(text)
        #expect(found.count == 1, "\(found.map(\.rendered))")
        guard let first = found.first else { return nil }
        #expect(first.file == configPath)
        #expect(first.line != nil && first.column != nil && first.sourceLine != nil, "\(first.rendered)")
        #expect(first.rendered.contains("^"), "\(first.rendered)")
        return first
    }

    @Test func nextLineCharacterInAnArray() {
        #expect(rendered("a = [\u{85}]") == """
            /home/u/.config/clickaway/config.toml:1:6: error: invalid TOML: expected a value (a string, number, boolean, date, array or inline table), found the invisible character U+0085
                1 | a = [\u{85}]
                  |      ^
            """)
    }

    @Test(arguments: ["\u{2028}", "\u{2029}"])
    func lineAndParagraphSeparatorsBetweenArrayElements(_ separator: String) {
        let d = only("a = [1,\(separator) 2]\n")
        #expect(d?.line == 1 && d?.column == 8)
        #expect(d?.message.hasSuffix("found the invisible character U+\(separator == "\u{2028}" ? "2028" : "2029")") == true)
    }

    @Test func dateFollowedByADigit() {
        #expect(rendered("a = 1979-05-27 1") == """
            /home/u/.config/clickaway/config.toml:1:16: error: invalid TOML: expected the end of the line after the value, found '1'
                1 | a = 1979-05-27 1
                  |                ^
            """)
    }

    @Test func dateWithATAndNoTime() {
        #expect(rendered("s=0876-05-27T:") == """
            /home/u/.config/clickaway/config.toml:1:14: error: invalid TOML: expected a time (HH:MM:SS) after the date's T, found ':'
                1 | s=0876-05-27T:
                  |              ^
            """)
    }

    @Test func fifteenThousandNestedInlineTables() {
        let d = only("x = " + String(repeating: "{a = ", count: 15_000))
        #expect(d?.line == 1)
        #expect(d?.column == 5 + 5 * 128, "the 129th level")
        #expect(d?.message == "invalid TOML: tables and arrays nest too deep: at most 128 levels")
    }

    @Test func twentyFiveThousandOpeningBrackets() {
        let d = only("x = " + String(repeating: "[", count: 25_000))
        #expect(d?.column == 5 + 128, "the 129th level")
        #expect(d?.message == "invalid TOML: tables and arrays nest too deep: at most 128 levels")
    }

    @Test func tenKilobytesOfBracketsAlone() {
        let d = only(String(repeating: "[", count: 10_240))
        #expect(d?.line == 1 && d?.column == 3)
        #expect(d?.message == "invalid TOML: expected a key, found '['")
    }

    @Test func closedNestingDeeperThanTheLimit() {
        let d = only("x = " + String(repeating: "[", count: 5_000) + String(repeating: "]", count: 5_000) + "\n")
        #expect(d?.message == "invalid TOML: tables and arrays nest too deep: at most 128 levels")
    }

    @Test func fortyFourKilobyteDottedKey() {
        let key = Array(repeating: "a", count: 22_500).joined(separator: ".")
        #expect(key.utf8.count >= 44_000)
        let d = only(key + " = 1\n")
        #expect(d?.line == 1 && d?.column == 2 * 128 + 1)
        #expect(d?.message == "invalid TOML: a key may have at most 128 dotted parts")
    }

    @Test func tenThousandPartTableHeader() {
        let d = only("[" + Array(repeating: "popup", count: 10_000).joined(separator: ".") + "]\n")
        #expect(d?.line == 1 && d?.column == 2 + 6 * 128)
        #expect(d?.message == "invalid TOML: a key may have at most 128 dotted parts")
    }

    @Test func headersNestingDeeperThanTheLimitThroughArraysOfTables() {
        // Each [[...]] level is two: the array and its table.
        var text = "[[popup]]\nname = \"p\"\nrect = [0, 0, 9, 9]\n"
        for depth in 1...70 { text += "[[popup" + String(repeating: ".region", count: depth) + "]]\nrect = [0, 0, 1, 1]\n" }
        let found = diagnostics(text)
        #expect(found.first?.message == "invalid TOML: tables and arrays nest too deep: at most 128 levels", "\(found)")
        #expect(found.first?.line != nil)
    }

    @Test func slopThatWouldWrapIsRefused() {
        #expect(rendered("[[popup]]\nname = \"p\"\nrect = [0, 0, 100, 100]\nslop = 2000000000\n") == """
            /home/u/.config/clickaway/config.toml:4:8: error: popup "p" → slop: expected an integer from 0 to 1048576, found 2000000000
                4 | slop = 2000000000
                  |        ^^^^^^^^^^
            """)
    }

    @Test func coordinatesOutsideTheLimitsAreRefused() {
        let found = diagnostics("[[popup]]\nname = \"p\"\nrect = [-1048577, 1048577, 1048577, 0]\n")
        #expect(found.map(\.message) == [
            "expected an integer from -1048576 to 1048576, found -1048577",
            "expected an integer from -1048576 to 1048576, found 1048577",
            "expected an integer from 0 to 1048576, found 1048577",
        ])
    }

    @Test func theLimitsThemselvesLoad() throws {
        let config = try load("[[popup]]\nname = \"p\"\nrect = [-1048576, 1048576, 1048576, 1048576]\nslop = [1048576, 0, 1048576, 0]\n")
        #expect(config.popupCount == 1)
    }

    /// A file with thousands of errors reports the first hundred, then how many more.
    @Test func thousandsOfErrorsAreCountedAfterTheFirstHundred() {
        let found = diagnostics(String(repeating: "[[popup]]\n", count: 5_000))
        #expect(found.count == 101)
        #expect(found.last?.message == "9900 more errors in this file not shown; fix the ones above first")
        #expect(found.last?.line == nil)
    }

    @Test func aLongLineIsQuotedAroundTheError() {
        let text = "a = [" + String(repeating: "1, ", count: 1_000) + "x]\n"
        let d = only(text)
        #expect(d?.column == 3006)
        let quoted = d?.sourceLine ?? ""
        #expect(quoted.count <= 170 && quoted.hasPrefix("…"), "\(quoted)")
        #expect(d?.rendered.hasSuffix(String(repeating: " ", count: 81) + "^") == true, "\(d?.rendered ?? "")")
    }
}
