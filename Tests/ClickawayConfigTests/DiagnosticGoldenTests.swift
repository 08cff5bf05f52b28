import ClickawayConfig
import Testing

/// The exact text users see. Each test pins the rendering of one kind of error.
@Suite struct DiagnosticGoldenTests {
    @Test func unknownKeyWithADidYouMean() {
        let text = "[settings]\nbackend = \"auto\"\n" + String(repeating: "\n", count: 7) + """
            [[popup]]
            name = "calendar"
            window = { clss = "eww-calendar" }
            """
        #expect(rendered([("/path/to/config.toml", text)]) == """
            /path/to/config.toml:12:12: error: popup "calendar" → window: unknown key "clss"; did you mean "class"?
               12 | window = { clss = "eww-calendar" }
                  |            ^^^^
            """)
    }

    @Test func syntaxError() {
        #expect(rendered("[[popup]]\nname = \"calendar\"\nrect = [0, 0, 10 10]\n") == """
            /home/u/.config/clickaway/config.toml:3:18: error: invalid TOML: expected ',' or ']' after an array element, found '1'
                3 | rect = [0, 0, 10 10]
                  |                  ^
            """)
    }

    @Test func unknownTopLevelKeys() {
        #expect(rendered("[setings]\nbackend = \"auto\"\n\n[[popups]]\nname = \"x\"\n") == """
            /home/u/.config/clickaway/config.toml:1:2: error: unknown key "setings"; did you mean "settings"?
                1 | [setings]
                  |  ^^^^^^^

            /home/u/.config/clickaway/config.toml:4:3: error: unknown key "popups"; did you mean "popup"?
                4 | [[popups]]
                  |   ^^^^^^
            """)
    }

    @Test func unknownKeyInPopup() {
        #expect(rendered("[[popup]]\nname = \"osd\"\nrect = [0, 0, 10, 10]\ngrce_ms = 100\n") == """
            /home/u/.config/clickaway/config.toml:4:1: error: popup "osd": unknown key "grce_ms"; did you mean "grace_ms"?
                4 | grce_ms = 100
                  | ^^^^^^^
            """)
    }

    @Test func unknownKeyInRegion() {
        let text = """
            [[popup]]
            name = "osd"
            rect = [0, 0, 10, 10]
              [[popup.region]]
              name = "knob"
              rect = [1, 1, 2, 2]
              sloop = 4
            """
        #expect(rendered(text) == """
            /home/u/.config/clickaway/config.toml:7:3: error: popup "osd" → region "knob": unknown key "sloop"; did you mean "slop"?
                7 |   sloop = 4
                  |   ^^^^^
            """)
    }

    @Test func unknownKeyWithoutASuggestion() {
        #expect(rendered("[defaults]\nflavour = \"vanilla\"\n") == """
            /home/u/.config/clickaway/config.toml:2:1: error: defaults: unknown key "flavour"
                2 | flavour = "vanilla"
                  | ^^^^^^^
            """)
    }

    @Test func wrongType() {
        #expect(rendered("[defaults]\ngrace_ms = \"150\"\n") == """
            /home/u/.config/clickaway/config.toml:2:12: error: defaults → grace_ms: expected an integer, found a string
                2 | grace_ms = "150"
                  |            ^^^^^
            """)
    }

    @Test func badEnumValues() {
        #expect(rendered("[defaults]\noutside_click = \"swalow\"\ntrigger = 1\n") == """
            /home/u/.config/clickaway/config.toml:2:17: error: defaults → outside_click: expected "swallow" or "replay", found "swalow"; did you mean "swallow"?
                2 | outside_click = "swalow"
                  |                 ^^^^^^^^

            /home/u/.config/clickaway/config.toml:3:11: error: defaults → trigger: expected "press" or "click", found an integer
                3 | trigger = 1
                  |           ^
            """)
    }

    @Test func badRectLength() {
        #expect(rendered("[[popup]]\nname = \"osd\"\nrect = [0, 0, 10]\n") == """
            /home/u/.config/clickaway/config.toml:3:8: error: popup "osd" → rect: rect needs 4 integers [x, y, width, height], found 3
                3 | rect = [0, 0, 10]
                  |        ^^^^^^^^^^
            """)
    }

    @Test func missingName() {
        #expect(rendered("[[popup]]\nrect = [0, 0, 10, 10]\n") == """
            /home/u/.config/clickaway/config.toml:1:1: error: popup #1: missing required key "name"
                1 | [[popup]]
                  | ^^^^^^^^^
            """)
    }

    @Test func bothWindowAndRect() {
        #expect(rendered("[[popup]]\nname = \"osd\"\nwindow = { class = \"osd\" }\nrect = [0, 0, 10, 10]\n") == """
            /home/u/.config/clickaway/config.toml:4:1: error: popup "osd": window and rect exclude each other; set one of them
                4 | rect = [0, 0, 10, 10]
                  | ^^^^
            """)
    }

    @Test func duplicatePopupNames() {
        let text = """
            [[popup]]
            name = "osd"
            rect = [0, 0, 10, 10]

            [[popup]]
            name = "osd"
            window = { class = "osd" }
            """
        #expect(rendered(text) == """
            /home/u/.config/clickaway/config.toml:6:8: error: popup "osd" → name: duplicate popup name "osd" (first used by popup #1)
                6 | name = "osd"
                  |        ^^^^^
            """)
    }

    @Test func unknownParentWithSuggestion() {
        let text = """
            [[popup]]
            name = "calendar"
            window = { class = "cal" }

            [[popup]]
            name = "menu"
            parent = "calender"
            window = { class = "menu" }
            """
        #expect(rendered(text) == """
            /home/u/.config/clickaway/config.toml:7:10: error: popup "menu" → parent: unknown parent "calender"; did you mean "calendar"?
                7 | parent = "calender"
                  |          ^^^^^^^^^^
            """)
    }

    @Test func parentCycle() {
        let text = """
            [[popup]]
            name = "a"
            parent = "b"
            rect = [0, 0, 1, 1]

            [[popup]]
            name = "b"
            parent = "a"
            rect = [0, 0, 1, 1]
            """
        #expect(rendered(text) == """
            /home/u/.config/clickaway/config.toml:3:10: error: popup "a" → parent: parent cycle: "a" → "b" → "a"
                3 | parent = "b"
                  |          ^^^
            """)
    }

    @Test func unknownRedirect() {
        let text = """
            [[popup]]
            name = "card"
            rect = [0, 0, 100, 100]
              [[popup.region]]
              name = "day"
              rect = [0, 0, 10, 10]
              [[popup.region]]
              name = "margin"
              rect = [0, 0, 100, 100]
              redirect = "dya"
            """
        #expect(rendered(text) == """
            /home/u/.config/clickaway/config.toml:10:14: error: popup "card" → region "margin" → redirect: unknown redirect target "dya" (write "region" for a region of this popup or "popup.region" for another popup's)
               10 |   redirect = "dya"
                  |              ^^^^^
            """)
    }

    @Test func everyErrorOfOneRun() {
        let text = """
            [settings]
            backend = "weyland"
            log_level = "verbose"

            [[popup]]
            name = "my popup"
            window = { class = "x", type = "popup-menu" }
            buttons = [1, 1, 40]
            dismiss = { command = [] }
            slop = -3

            [[popup]]
            rect = [0, 0, -5, 10]

            [[exclude]]
            output = "DP-1"
            """
        #expect(rendered(text) == """
            /home/u/.config/clickaway/config.toml:2:11: error: settings → backend: expected "auto", "x11-grab", "x11-shield" or "wayland", found "weyland"; did you mean "wayland"?
                2 | backend = "weyland"
                  |           ^^^^^^^^^

            /home/u/.config/clickaway/config.toml:3:13: error: settings → log_level: expected "error", "warning", "info", "debug" or "trace", found "verbose"
                3 | log_level = "verbose"
                  |             ^^^^^^^^^

            /home/u/.config/clickaway/config.toml:6:8: error: popup "my popup" → name: expected a name made of letters, digits, "_" and "-", found "my popup"
                6 | name = "my popup"
                  |        ^^^^^^^^^^

            /home/u/.config/clickaway/config.toml:7:32: error: popup "my popup" → window → type: expected "desktop", "dock", "toolbar", "menu", "utility", "splash", "dialog", "dropdown_menu", "popup_menu", "tooltip", "notification", "combo", "dnd" or "normal", found "popup-menu"; did you mean "popup_menu"?
                7 | window = { class = "x", type = "popup-menu" }
                  |                                ^^^^^^^^^^^^

            /home/u/.config/clickaway/config.toml:8:15: error: popup "my popup" → buttons: button 1 is listed twice
                8 | buttons = [1, 1, 40]
                  |               ^

            /home/u/.config/clickaway/config.toml:8:18: error: popup "my popup" → buttons: expected an integer from 1 to 31, found 40
                8 | buttons = [1, 1, 40]
                  |                  ^^

            /home/u/.config/clickaway/config.toml:9:23: error: popup "my popup" → dismiss → command: expected at least the program to run, found an empty array
                9 | dismiss = { command = [] }
                  |                       ^^

            /home/u/.config/clickaway/config.toml:10:8: error: popup "my popup" → slop: expected an integer from 0 to 1048576, found -3
               10 | slop = -3
                  |        ^^

            /home/u/.config/clickaway/config.toml:12:1: error: popup #2: missing required key "name"
               12 | [[popup]]
                  | ^^^^^^^^^

            /home/u/.config/clickaway/config.toml:13:15: error: popup #2 → rect: expected an integer from 0 to 1048576, found -5
               13 | rect = [0, 0, -5, 10]
                  |               ^^

            /home/u/.config/clickaway/config.toml:15:1: error: exclude #1: missing window = { ... } or rect = [x, y, width, height]
               15 | [[exclude]]
                  | ^^^^^^^^^^^
            """)
    }

    @Test func errorsInDropInFilesNameThoseFiles() {
        let files = [
            ("/c/config.toml", "[[popup]]\nname = \"a\"\nrect = [0, 0, 1, 1]\n"),
            ("/c/conf.d/10-a.toml", "[[popup]]\nname = \"b\"\nparent = \"c\"\nrect = [0, 0, 1, 1]\n"),
            ("/c/conf.d/20-b.toml", "[defaults]\ngrace_ms = -1\n[[popup]]\nname = \"a\"\nrect = [0, 0, 1, 1]\n"),
        ]
        #expect(rendered(files) == """
            /c/conf.d/10-a.toml:3:10: error: popup "b" → parent: unknown parent "c"; did you mean "a"?
                3 | parent = "c"
                  |          ^^^

            /c/conf.d/20-b.toml:2:12: error: defaults → grace_ms: expected an integer from 0 to 3600000, found -1
                2 | grace_ms = -1
                  |            ^^

            /c/conf.d/20-b.toml:4:8: error: popup "a" → name: duplicate popup name "a" (first used by popup #1)
                4 | name = "a"
                  |        ^^^
            """)
    }

    @Test func syntaxErrorInOneFileDoesNotHideErrorsInAnother() {
        let files = [
            ("/c/config.toml", "[[popup]\n"),
            ("/c/conf.d/10-a.toml", "[[popup]]\nname = \"b\"\n"),
        ]
        #expect(rendered(files) == """
            /c/config.toml:1:9: error: invalid TOML: expected ']]' to close the array-of-tables header, found the end of the line
                1 | [[popup]
                  |         ^

            /c/conf.d/10-a.toml:1:1: error: popup "b": missing window = { ... } or rect = [x, y, width, height]
                1 | [[popup]]
                  | ^^^^^^^^^
            """)
    }

    @Test func regionThreeLevelsDeep() {
        let text = """
            [[popup]]
            name = "p"
            rect = [0, 0, 100, 100]
            [[popup.region]]
            name = "a"
            rect = [0, 0, 50, 50]
            [[popup.region.region]]
            name = "b"
            rect = [0, 0, 20, 20]
            [[popup.region.region.region]]
            name = "c"
            rect = [0, 0, 5, "5"]
            """
        #expect(rendered(text) == """
            /home/u/.config/clickaway/config.toml:12:18: error: popup "p" → region "a" → region "b" → region "c" → rect: expected an integer, found a string
               12 | rect = [0, 0, 5, "5"]
                  |                  ^^^
            """)
    }

    @Test func unnamedRegionsAnchorsAndElements() {
        let text = """
            [[popup]]
            name = "p"
            rect = [0, 0, 1, 1]
            anchors = [{ rect = [0, 0, 1, 1] }, { window = {} }, 3]
            [[popup.region]]
            slop = [1, 2]
            """
        #expect(rendered(text) == """
            /home/u/.config/clickaway/config.toml:4:48: error: popup "p" → anchor #2 → window: expected at least one of class, instance, title, title_glob, type, app_id
                4 | anchors = [{ rect = [0, 0, 1, 1] }, { window = {} }, 3]
                  |                                                ^^

            /home/u/.config/clickaway/config.toml:4:54: error: popup "p" → anchors: expected a table, found an integer
                4 | anchors = [{ rect = [0, 0, 1, 1] }, { window = {} }, 3]
                  |                                                      ^

            /home/u/.config/clickaway/config.toml:5:1: error: popup "p" → region #1: missing required key "rect"
                5 | [[popup.region]]
                  | ^^^^^^^^^^^^^^^^

            /home/u/.config/clickaway/config.toml:6:8: error: popup "p" → region #1 → slop: slop needs 4 integers [top, right, bottom, left], found 2
                6 | slop = [1, 2]
                  |        ^^^^^^
            """)
    }

    @Test func passthroughAndRedirectTogether() {
        let text = """
            [[popup]]
            name = "p"
            rect = [0, 0, 1, 1]
            redirect = "x"
            passthrough = true
            [[popup.region]]
            name = "x"
            rect = [0, 0, 1, 1]
            """
        #expect(rendered(text) == """
            /home/u/.config/clickaway/config.toml:5:1: error: popup "p": passthrough and redirect exclude each other
                5 | passthrough = true
                  | ^^^^^^^^^^^
            """)
    }

    @Test func singleTableInsteadOfAnArrayOfTables() {
        #expect(rendered("[popup]\nname = \"p\"\n") == """
            /home/u/.config/clickaway/config.toml:1:1: error: popup: expected an array of tables ([[popup]]), found a table
                1 | [popup]
                  | ^^^^^^^
            """)
    }

    @Test func caretFollowsTabsAndIgnoresCarriageReturns() {
        #expect(rendered("[[popup]]\r\n\tname = \"p\"\r\n\trect = [0, 0, 1, 1]\r\n\tclip = \"no\"\r\n") == """
            /home/u/.config/clickaway/config.toml:4:9: error: popup "p" → clip: expected true or false, found a string
                4 | \tclip = "no"
                  | \t       ^^^^
            """)
    }

    @Test func diagnosticWithoutALine() {
        let diagnostic = Diagnostic(file: "/c/conf.d/x.toml", message: "cannot read: permission denied")
        #expect(diagnostic.rendered == "/c/conf.d/x.toml: error: cannot read: permission denied")
        let withPath = Diagnostic(file: "/c/config.toml", path: "popup \"a\"", message: "something")
        #expect(withPath.rendered == "/c/config.toml: error: popup \"a\": something")
    }
}
