import Benchmark
import ClickawayCore

/// A bar with a calendar (card, header, 7×? day grid cells grouped in rows), a volume
/// slider and a power menu with a submenu: 20 regions in all, three popups open.
func twentyRegionEngine() -> DecisionEngine {
    let days = (0..<4).map { row in
        RegionSpec(name: "week\(row)", rect: Rect(x: 0, y: 40 + Int32(row) * 40, width: 280, height: 36), children: (0..<2).map { d in
            RegionSpec(name: "day\(d)", rect: Rect(x: Int32(d) * 40, y: 0, width: 36, height: 36))
        })
    }
    let calendar = PopupSpec(
        name: "calendar", source: .rect(Rect(x: 1500, y: 32, width: 320, height: 320), output: nil),
        anchors: [.rect(Rect(x: 1700, y: 0, width: 120, height: 32), output: nil)], passthrough: true,
        regions: [RegionSpec(name: "card", rect: Rect(x: 12, y: 12, width: 296, height: 280), slop: Insets(all: 6),
                             children: [RegionSpec(name: "header", rect: Rect(x: 0, y: 0, width: 296, height: 36))] + days)])
    let volume = PopupSpec(
        name: "volume", source: .rect(Rect(x: 1300, y: 32, width: 60, height: 200), output: nil),
        regions: [RegionSpec(name: "slider", rect: Rect(x: 20, y: 10, width: 20, height: 180), slop: Insets(all: 10))])
    let power = PopupSpec(
        name: "power", source: .rect(Rect(x: 0, y: 32, width: 200, height: 160), output: nil),
        regions: (0..<3).map { RegionSpec(name: "item\($0)", rect: Rect(x: 0, y: Int32($0) * 50, width: 200, height: 48)) })
    let submenu = PopupSpec(
        name: "power-sub", parent: "power", source: .rect(Rect(x: 200, y: 80, width: 150, height: 100), output: nil))
    let model = try! ClickModel(popups: [calendar, volume, power, submenu])
    let engine = DecisionEngine(model: model)
    for (i, p) in model.popups.enumerated() {
        engine.open(PopupInstance(popup: Int32(i), rect: p.fixedRect!, openedAt: 0, id: .rect(UInt64(i + 1))))
    }
    return engine
}

/// One popup with 10,000 regions: 100 groups of 99 leaves, the point deep in the last-tested one.
func tenThousandRegionEngine() -> DecisionEngine {
    let groups = (0..<100).map { g in
        RegionSpec(name: "g\(g)", rect: Rect(x: Int32(g % 10) * 100, y: Int32(g / 10) * 100, width: 100, height: 100),
                   clip: false, children: (0..<99).map { c in
                       RegionSpec(name: "c\(c)", rect: Rect(x: Int32(c % 10) * 10, y: Int32(c / 10) * 10, width: 9, height: 9))
                   })
    }
    let model = try! ClickModel(popups: [PopupSpec(
        name: "big", source: .rect(Rect(x: 0, y: 0, width: 1000, height: 1000), output: nil), regions: groups)])
    let engine = DecisionEngine(model: model)
    engine.open(PopupInstance(popup: 0, rect: model.popups[0].fixedRect!, openedAt: 0, id: .rect(1)))
    return engine
}

/// One program's menus in a burst (bench/run's 3fs, issue 43): one popup open with 2,000
/// override-redirect windows of its family over it, 200 pixels square and staggered as
/// clickbench maps them (x 900 + i % 50, y 700 + i % 40).
func familyBurstEngine() -> DecisionEngine {
    let model = try! ClickModel(popups: [PopupSpec(name: "burst", source: .rect(Rect(x: 0, y: 0, width: 1, height: 1), output: nil))])
    let engine = DecisionEngine(model: model)
    let owner = PopupInstance(popup: 0, rect: Rect(x: 900, y: 700, width: 200, height: 200), openedAt: 0, id: .window(1))
    engine.setOpen([owner])
    engine.setWindowAreas((1..<2000).map { i in
        Area(kind: .member(of: owner.id, popup: 0, window: UInt32(i + 1)),
             rect: Rect(x: 900 + Int32(i % 50), y: 700 + Int32(i % 40), width: 200, height: 200))
    })
    return engine
}

let benchmarks: @Sendable () -> Void = {
    // Engines are built once, outside every sample: building (and freeing) 10,000 regions
    // would otherwise be timed with the decision.
    let twenty = twentyRegionEngine()
    let twentyOpen = twenty.open
    let big = tenThousandRegionEngine()

    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .mallocCountTotal],
        scalingFactor: .kilo,
        maxDuration: .seconds(3),
        maxIterations: 100_000
    )

    // Inside clicks leave the open set unchanged, so every iteration decides the same state.
    Benchmark("decision, 20 regions, inside click (press)") { benchmark in
        var time: Int64 = 1_000_000
        for _ in benchmark.scaledIterations {
            time += 1
            blackHole(twenty.press(button: 1, x: 1540, y: 100, time: time))
        }
    }

    // Outside clicks dismiss everything: the popups are put back before each measured press.
    Benchmark("decision, 20 regions, outside click dismissing all (press)",
              configuration: .init(metrics: [.wallClock, .mallocCountTotal], scalingFactor: .one)) { benchmark in
        var time: Int64 = 1_000_000
        for _ in benchmark.scaledIterations {
            twenty.setOpen(twentyOpen)
            time += 1
            benchmark.startMeasurement()
            blackHole(twenty.press(button: 1, x: 900, y: 700, time: time))
            benchmark.stopMeasurement()
        }
        twenty.setOpen(twentyOpen)
    }

    // What the shield mode works out at each settle of such a burst.
    let family = familyBurstEngine()
    Benchmark("shield holes, one popup with 2,000 windows of its family",
              configuration: .init(metrics: [.wallClock, .mallocCountTotal], scalingFactor: .one)) { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(family.holes(in: Rect(x: 0, y: 0, width: 1920, height: 1080)))
        }
    }

    Benchmark("hit-test, 10,000 regions, deepest point") { benchmark in
        for _ in benchmark.scaledIterations {
            // Group g0 is declared first, so it is tried last; its leaf c98 is tried first.
            blackHole(big.hitTest(x: 85, y: 95))
        }
    }

    Benchmark("decision, 10,000 regions (press)") { benchmark in
        var time: Int64 = 1_000_000
        for _ in benchmark.scaledIterations {
            time += 1
            blackHole(big.press(button: 1, x: 5, y: 5, time: time))
        }
    }
}
