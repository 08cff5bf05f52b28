import ClickawayJSON
import Foundation
import ProcessSupport
import Testing

/// `clickawayctl show --svg` against `clickawayctl hit`, on the example configuration and on a
/// nested region tree: at the middle of every cell drawn and on a grid of points, the picture
/// says what `hit` decides.
@Suite("clickawayctl show --svg")
struct ShowSVGTests {
    struct Cell {
        var x, y, width, height: Int
        var region: String?
        var dismisses: Bool
        func contains(_ px: Int, _ py: Int) -> Bool { px >= x && px < x + width && py >= y && py < y + height }
    }

    static let nested = """
        [[popup]]
        name = "menu"
        rect = [100, 100, 400, 300]
        slop = 4
        anchors = [ { rect = [100, 60, 80, 30] } ]
          [[popup.region]]
          name = "card"
          rect = [10, 10, 200, 150]
          slop = 6
            [[popup.region.region]]
            name = "button"
            rect = [180, 130, 60, 40]
            clip = false
          [[popup.region]]
          name = "margin"
          rect = [300, 10, 80, 250]
          passthrough = true
        [[popup]]
        name = "sub"
        parent = "menu"
        rect = [450, 300, 200, 150]
        [[exclude]]
        rect = [700, 600, 100, 50]
        """

    /// clickawayctl with CONFIG standing for a file holding `config`, as CtlCommandTests runs it.
    func ctl(_ arguments: [String], config: String) throws -> ProgramRun { try CtlCommandTests().ctl(arguments, config: config) }

    /// The cells of a picture: its rectangles that carry a decision.
    static func cells(_ svg: String) -> [Cell] {
        svg.split(separator: "\n").filter { $0.contains("data-reason=") }.compactMap { line in
            func attribute(_ name: String) -> String? {
                guard let start = line.range(of: " \(name)=\"") else { return nil }
                return String(line[start.upperBound...].prefix { $0 != "\"" })
            }
            guard let x = attribute("x").flatMap(Int.init), let y = attribute("y").flatMap(Int.init),
                  let w = attribute("width").flatMap(Int.init), let h = attribute("height").flatMap(Int.init) else { return nil }
            return Cell(x: x, y: y, width: w, height: h, region: attribute("data-region"), dismisses: attribute("data-dismisses") == "true")
        }
    }

    func check(config: String, open: [String], screen: (Int, Int)) throws {
        let opened = open.flatMap { ["--open", $0] }
        let show = try ctl(["show", "--svg", "-", "--config", "CONFIG", "--screen", "\(screen.0)x\(screen.1)"] + opened, config: config)
        #expect(show.status == 0, "\(show.stderr)")
        let cells = Self.cells(show.stdout)
        try #require(!cells.isEmpty, "no cells in \(show.stdout.prefix(300))")
        var points = cells.prefix(60).map { ($0.x + $0.width / 2, $0.y + $0.height / 2) }
        for gx in stride(from: 5, to: screen.0, by: screen.0 / 8) {
            for gy in stride(from: 5, to: screen.1, by: screen.1 / 6) { points.append((gx, gy)) }
        }
        for (x, y) in points {
            let hit = try ctl(["hit", "--json", "--config", "CONFIG"] + opened + ["\(x)", "\(y)"], config: config)
            let json = try JSON.parse(hit.stdout)
            let drawn = cells.filter { $0.contains(x, y) }
            #expect(drawn.count <= 1, "(\(x), \(y)) is in \(drawn.count) cells")
            let region = json["hit"]?["region"]?.stringValue
            let dismisses = json["dismiss"]?.arrayValue?.isEmpty == false
            if let cell = drawn.first {
                #expect(cell.region == region && cell.dismisses == dismisses,
                        "(\(x), \(y)): drawn \(cell.region ?? "-") dismissing \(cell.dismisses), hit says \(hit.stdout)")
            } else {
                // Not drawn: a press there passes and dismisses nothing.
                #expect(region == nil && !dismisses, "(\(x), \(y)) is not drawn but hit says \(hit.stdout)")
            }
        }
    }

    @Test func theExampleConfigurationsPictureIsWhatHitDecides() throws {
        let example = try String(contentsOf: RecipeFiles.directory.deletingLastPathComponent().appendingPathComponent("config.toml"),
                                 encoding: .utf8)
        try check(config: example, open: ["calendar=1560,40,320,304"], screen: (1920, 1080))
    }

    @Test func aNestedRegionTreesPictureIsWhatHitDecides() throws {
        try check(config: Self.nested, open: ["menu", "sub"], screen: (900, 700))
    }

    @Test func theOfflineOptionsGoWithSvgOnly() throws {
        let run = try ctl(["show", "--config", "CONFIG"], config: Self.nested)
        #expect(run.status == 64)
        #expect(run.stderr.contains("--config, --screen and --open go with --svg"), "\(run.stderr)")
        let both = try ctl(["show", "--svg", "-", "--for", "3", "--config", "CONFIG"], config: Self.nested)
        #expect(both.status == 64)
        #expect(both.stderr.contains("--svg draws offline"), "\(both.stderr)")
        // Any number of popups; --off takes none.
        let off = try ctl(["show", "menu", "sub", "--off"], config: Self.nested)
        #expect(off.status == 64)
        #expect(off.stderr.contains("--off stops the drawing: it takes no POPUP and no --all"), "\(off.stderr)")
        let long = try ctl(["show", "menu", "--for", "0"], config: Self.nested)
        #expect(long.stderr.contains("--for 0: from 1 to 3600 seconds"), "\(long.stderr)")
    }
}
