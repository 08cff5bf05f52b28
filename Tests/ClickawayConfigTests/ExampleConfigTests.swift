import ClickawayConfig
import ClickawayCore
import Testing

/// The first schema's annotated example, word for word: a commented configuration as users
/// copy it (the first backends listed in its comments).
let annotatedExample = """
    [settings]
    backend = "auto"            # "auto" | "x11-grab"   (later: "x11-shield", "wayland")
    log_level = "info"          # "error" | "warning" | "info" | "debug" | "trace"

    [defaults]                  # every [[popup]] inherits these unless it sets them
    outside_click = "swallow"   # "swallow" | "replay"
    trigger = "press"           # "press" | "click" (press and release both outside)
    buttons = [1, 2, 3]         # buttons that may dismiss; wheel 4-7 only if listed
    grace_ms = 150              # a popup younger than this is not dismissed
    dismiss = "close"           # "close" | "unmap" | "kill" | { command = [...] }

    [[popup]]
    name = "calendar"                                   # unique, [A-Za-z0-9_-]+
    window = { class = "eww-calendar" }                 # or rect = [x, y, w, h] (+ output = "DP-1")
    dismiss = { command = ["eww", "close", "calendar"] }
    anchors = [ { rect = [1700, 0, 120, 32] } ]         # rect and/or window = { ... }
    passthrough = true                                  # the window's own margins count as outside
      [[popup.region]]
      name = "card"
      rect = [12, 12, 296, 280]
      slop = 6

    [[popup]]
    name = "calendar-menu"
    parent = "calendar"
    window = { class = "eww-calendar-menu" }

    [[exclude]]
    window = { class = "Onboard" }
    """

@Suite struct ExampleConfigTests {
    @Test func annotatedExampleMapsOntoTheModel() throws {
        let config = try load(annotatedExample)
        let model = config.model
        #expect(model.settings == Settings())
        #expect(config.files == [configPath])
        #expect(config.notes.isEmpty)
        #expect((config.popupCount, config.regionCount, config.exclusionCount) == (2, 1, 1))

        #expect(model.popups[0] == PopupSpec(
            name: "calendar",
            source: .window(WindowMatch(windowClass: "eww-calendar")),
            anchors: [.rect(Rect(x: 1700, y: 0, width: 120, height: 32), output: nil)],
            passthrough: true,
            regions: [RegionSpec(name: "card", rect: Rect(x: 12, y: 12, width: 296, height: 280), slop: Insets(all: 6))],
            outsideClick: .swallow, trigger: .press, buttons: ButtonSet([1, 2, 3]), graceMs: 150,
            dismiss: .command(["eww", "close", "calendar"])))
        #expect(model.popups[1] == PopupSpec(
            name: "calendar-menu", parent: "calendar",
            source: .window(WindowMatch(windowClass: "eww-calendar-menu")),
            dismiss: .close))
        #expect(model.exclusions == [ExclusionSpec(source: .window(WindowMatch(windowClass: "Onboard")))])
    }

    @Test func everyKeyMapsOntoTheModel() throws {
        let config = try load("""
            [settings]
            backend = "x11-grab"
            log_level = "trace"

            [defaults]
            outside_click = "replay"
            trigger = "click"
            buttons = [1, 3]
            grace_ms = 0
            dismiss = "unmap"

            [[popup]]
            name = "menu"
            rect = [10, 20, 300, 400]
            output = "DP-1"
            slop = [1, 2, 3, 4]
            clip = false
            redirect = "body"
            buttons = [1, 2, 3, 8]
            grace_ms = 500
            dismiss = "kill"
            anchors = [{ window = { instance = "polybar", title = "bar", title_glob = "b*", type = "dock" } },
                       { rect = [0, 0, 5, 5], output = "HDMI-1" }]

              [[popup.region]]
              name = "body"
              rect = [0, 0, 300, 380]
              hidden = true
              enabled = false
              passthrough = true

                [[popup.region.region]]
                rect = [5, 5, 10, 10]

            [[exclude]]
            rect = [0, 1000, 1920, 80]
            output = "DP-2"
            """)
        #expect(config.model.settings.backend == .x11Grab)
        #expect(config.model.settings.logLevel == .trace)
        #expect(config.model.popups == [PopupSpec(
            name: "menu",
            source: .rect(Rect(x: 10, y: 20, width: 300, height: 400), output: "DP-1"),
            anchors: [.window(WindowMatch(instance: "polybar", title: "bar", titleGlob: "b*", type: "dock")),
                      .rect(Rect(x: 0, y: 0, width: 5, height: 5), output: "HDMI-1")],
            slop: Insets(top: 1, right: 2, bottom: 3, left: 4), clip: false, redirect: "body",
            regions: [RegionSpec(name: "body", rect: Rect(x: 0, y: 0, width: 300, height: 380), passthrough: true,
                                 hidden: true, enabled: false,
                                 children: [RegionSpec(rect: Rect(x: 5, y: 5, width: 10, height: 10))])],
            outsideClick: .replay, trigger: .click, buttons: ButtonSet([1, 2, 3, 8]), graceMs: 500, dismiss: .kill)])
        #expect(config.model.exclusions == [
            ExclusionSpec(source: .rect(Rect(x: 0, y: 1000, width: 1920, height: 80), output: "DP-2")),
        ])
        #expect(config.regionCount == 2)
    }

    @Test func builtInDefaultsApplyWithoutADefaultsTable() throws {
        let popup = try load("[[popup]]\nname = \"p\"\nrect = [0, 0, 1, 1]\n").model.popups[0]
        #expect(popup.outsideClick == .swallow)
        #expect(popup.trigger == .press)
        #expect(popup.buttons == ButtonSet([1, 2, 3]))
        #expect(popup.graceMs == 150)
        #expect(popup.dismiss == .close)
    }

    @Test func arraysOfTablesAndDottedKeysAreTheSameConfig() throws {
        let dotted = try load("""
            [[popup]]
            name = "p"
            window.class = "x"
            dismiss.command = ["true"]
            [[popup.anchors]]
            rect = [1, 2, 3, 4]
            """)
        #expect(dotted.model.popups[0] == PopupSpec(
            name: "p", source: .window(WindowMatch(windowClass: "x")),
            anchors: [.rect(Rect(x: 1, y: 2, width: 3, height: 4), output: nil)], dismiss: .command(["true"])))
    }

    @Test func emptyFileIsAnEmptyConfig() throws {
        let config = try load("# nothing yet\n")
        #expect(config.popupCount == 0)
        #expect(config.exclusionCount == 0)
    }
}
