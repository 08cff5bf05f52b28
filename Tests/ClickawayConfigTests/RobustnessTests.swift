import ClickawayConfig
import Testing

/// Malformed input of every kind: each must be reported, with a line, and nothing may crash.
let malformedSnippets: [String] = [
    "a = ",
    "[[popup]\n",
    "[popup\n",
    "x = \"unterminated\n",
    "x = 1\nx = 2\n",
    "x = 9223372036854775808\n",
    "= 1\n",
    "a = [1,\n",
    "b = { c = 1\n",
    "'''\n",
    String(repeating: "[", count: 300) + String(repeating: "]", count: 300),
    "k = " + String(repeating: "[", count: 300) + String(repeating: "]", count: 300),
    "settings = 1\n",
    "defaults = []\nexclude = \"x\"\n",
    "[settings]\nbackend = \"\"\nlog_level = []\n",
    "[defaults]\nbuttons = []\ngrace_ms = 1.5\n",
    "[defaults]\nbuttons = [0, 32, \"1\", 1.0]\ngrace_ms = 1979-05-27\n",
    "[defaults]\ndismiss = {}\n",
    "[defaults]\ndismiss = { command = [\"\"] }\n",
    "[defaults]\ndismiss = { command = [1, true] }\n",
    "[defaults]\ndismiss = { cmd = [\"x\"] }\n",
    "[defaults]\ndismiss = 7\ntrigger = \"\"\n",
    "[[popup]]\nname = \"\"\nrect = [0, 0, 1, 1]\n",
    "[[popup]]\nname = \"a.b\"\nrect = [0, 0, 1, 1]\n",
    "[[popup]]\nname = 1\nparent = 2\nredirect = []\nrect = [0, 0, 1, 1]\n",
    "[[popup]]\nname = \"p\"\nwindow = \"x\"\n",
    "[[popup]]\nname = \"p\"\nwindow = {}\n",
    "[[popup]]\nname = \"p\"\nwindow = { class = 1, title_glob = [], tpye = \"dock\" }\n",
    "[[popup]]\nname = \"p\"\nwindow = { class = \"x\" }\noutput = \"DP-1\"\n",
    "[[popup]]\nname = \"p\"\nrect = [0, 0, 1, 1]\noutput = 3\n",
    "[[popup]]\nname = \"p\"\nrect = \"0 0 1 1\"\n",
    "[[popup]]\nname = \"p\"\nrect = [[0], 0, 1, 1]\n",
    "[[popup]]\nname = \"p\"\nrect = [-2147483649, 0, 1, 99999999999]\n",
    "[[popup]]\nname = \"p\"\nrect = [0, 0, 1, 1]\nanchors = {}\n",
    "[[popup]]\nname = \"p\"\nrect = [0, 0, 1, 1]\nanchors = [[1], {}]\n",
    "[[popup]]\nname = \"p\"\nrect = [0, 0, 1, 1]\nregion = 1\n",
    "[[popup]]\nname = \"p\"\nrect = [0, 0, 1, 1]\n[[popup.region]]\nrect = [0, 0, 1, 1]\nregion = [1]\nhidden = 1\nenabled = \"yes\"\n",
    "[[popup]]\nname = \"p\"\nrect = [0, 0, 1, 1]\nslop = [1, 2, 3, \"4\"]\nclip = 0\npassthrough = \"true\"\n",
    "[[popup]]\nname = \"p\"\nrect = [0, 0, 1, 1]\n[[popup.region]]\nname = \"r\"\nrect = [0, 0, 1, 1]\n[[popup.region]]\nname = \"r\"\nrect = [0, 0, 1, 1]\n",
    "[[popup]]\nname = \"p\"\nparent = \"p\"\nrect = [0, 0, 1, 1]\n",
    "[[exclude]]\nwindow = { class = \"x\" }\nrect = [0, 0, 1, 1]\n",
    "[[exclude]]\nname = \"x\"\n",
    "\"\" = 1\n",
    // toml++ (in TOMLKit, before our own parser) asserted on these instead of reporting them.
    "[[[popup]]]\n",
    "[=]\n",
    "[\n",
    "[[ +a]]\n",
    "a = [1, }]\n",
    "a = 1\nb = [\n  # comment\n}\n",
    "x = { y = [[}]] }\n",
]

@Suite struct RobustnessTests {
    @Test(arguments: malformedSnippets)
    func malformedInputIsReportedWithAPosition(_ text: String) {
        let found = diagnostics(text)
        #expect(!found.isEmpty)
        for diagnostic in found {
            #expect(diagnostic.line != nil, "no line for: \(diagnostic.rendered)")
            #expect(diagnostic.sourceLine != nil, "no source line for: \(diagnostic.rendered)")
        }
    }

    @Test func aHeaderWithThreeBracketsIsAnError() {
        #expect(rendered("[settings]\nbackend = \"auto\"\n[[[popup]]]\n") == """
            /home/u/.config/clickaway/config.toml:3:3: error: invalid TOML: expected a key, found '['
                3 | [[[popup]]]
                  |   ^
            """)
    }

    @Test func aBraceInAnArrayIsAnError() {
        #expect(rendered("a = 1\nb = [\n  1,\n}\n") == """
            /home/u/.config/clickaway/config.toml:4:1: error: invalid TOML: expected a value (a string, number, boolean, date, array or inline table), found '}'
                4 | }
                  | ^
            """)
    }

    @Test func anEarlierSyntaxErrorIsReportedFirst() {
        #expect(rendered("a = \n[[[popup]]]\n") == """
            /home/u/.config/clickaway/config.toml:1:5: error: invalid TOML: expected a value (a string, number, boolean, date, array or inline table), found the end of the line
                1 | a = 
                  |     ^
            """)
    }

    @Test func nulCharacterIsReportedWhereItIs() {
        #expect(rendered("[settings]\u{0}\nbackend = 1\n") == """
            /home/u/.config/clickaway/config.toml:1:11: error: invalid TOML: expected the end of the line after the table header, found a NUL byte (U+0000); is this a text file?
                1 | [settings]\u{0}
                  |           ^
            """)
    }
}
