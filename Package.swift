// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "clickaway",
    platforms: [.macOS(.v13)],
    products: [
        .executable(name: "clickaway", targets: ["clickaway"]),
        .executable(name: "clickawayctl", targets: ["clickawayctl"]),
        .library(name: "ClickawayCore", targets: ["ClickawayCore"]),
        // For the fuzzer (Fuzz/) and the benchmarks (Benchmarks/), which are packages of their own.
        .library(name: "ClickawayConfig", targets: ["ClickawayConfig"]),
    ],
    dependencies: [
        .package(url: "https://github.com/x-sheep/swift-property-based", from: "2.0.1"),
        .package(url: "https://github.com/apple/swift-system", from: "1.8.1"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
    ],
    targets: [
        // Geometry, region tree, popups and the decision engine: no X, no Foundation.
        .target(name: "ClickawayCore"),
        // TOML 1.0 with the source span of every table, key and value: pure Swift, no Foundation.
        .target(name: "ClickawayTOML"),
        // TOML → core model, diagnostics with file/line/caret, XDG lookup; no Foundation.
        .target(name: "ClickawayConfig", dependencies: [
            "ClickawayCore", "ClickawayTOML", "ClickawaySystem", "ClickawayJSON",
            .product(name: "SystemPackage", package: "swift-system"),
        ]),
        // glibc's functions that Swift's Glibc module hides behind _GNU_SOURCE, as a Clang module.
        .systemLibrary(name: "CLinux"),
        // The one system layer: the monotonic clock and deadlines, the poll loop, sockets,
        // spawning programs, on swift-system's FileDescriptor and Errno; no Foundation.
        .target(name: "ClickawaySystem", dependencies: [
            "CLinux",
            .product(name: "SystemPackage", package: "swift-system"),
        ]),
        // JSON values that keep their key order, printed and parsed; no Foundation.
        .target(name: "ClickawayJSON"),
        // The control socket's protocol: JSON lines, requests and replies.
        .target(name: "ClickawayControl", dependencies: [
            "ClickawayCore", "ClickawayJSON", "ClickawaySystem",
            .product(name: "SystemPackage", package: "swift-system"),
        ]),
        // The daemon: the loop, the decisions' answers and what follows them, behind the
        // Display protocol that the X11 and Wayland displays implement.
        .target(name: "ClickawayDaemon", dependencies: [
            "ClickawayCore", "ClickawayConfig", "ClickawayControl", "ClickawayJSON", "ClickawaySystem", "ClickawayX11",
            "ClickawayWayland", "ClickawayDBus",
            .product(name: "Logging", package: "swift-log"),
            .product(name: "SystemPackage", package: "swift-system"),
        ]),
        // Commands, options and arguments read from the command line, with the help, man pages
        // and shell completions written from the same definitions; no Foundation.
        .target(name: "ClickawayCommandLine", dependencies: ["ClickawaySystem"]),
        // The two programs: command lines only.
        .executableTarget(name: "clickaway", dependencies: ["ClickawayCore", "ClickawayDaemon", "ClickawayCommandLine"]),
        .executableTarget(name: "clickawayctl", dependencies: [
            "ClickawayCore", "ClickawayConfig", "ClickawayControl", "ClickawayX11", "ClickawayTOML", "ClickawaySystem", "ClickawayJSON",
            "ClickawayCommandLine",
        ]),
        .testTarget(name: "ClickawayCoreTests", dependencies: [
            "ClickawayCore",
            .product(name: "PropertyBased", package: "swift-property-based"),
        ]),
        .testTarget(name: "ClickawayConfigTests", dependencies: ["ClickawayConfig", "ClickawayCore", "ClickawayTOML"]),
        // The parser against the toml-test corpus, and its limits.
        .testTarget(name: "ClickawayTOMLTests", dependencies: ["ClickawayTOML", "ClickawayConfig"]),
        // libxcb and the XFixes, RandR and XTest extensions, as a Clang module.
        .systemLibrary(
            name: "CXCB",
            pkgConfig: "xcb xcb-xfixes xcb-randr xcb-xtest",
            providers: [.apt(["libxcb1-dev", "libxcb-xfixes0-dev", "libxcb-randr0-dev", "libxcb-xtest0-dev"])]),
        // A safe Swift layer over XCB: Swift values in and out, nothing to free.
        .target(name: "ClickawayX11", dependencies: [
            "CXCB", "ClickawayCore", "ClickawaySystem", .product(name: "SystemPackage", package: "swift-system"),
        ]),
        // Test support, beside the tests: `Sources/` is the product.
        // Programs run for a test (Xvfb, window managers, compositors), bounded waits, and a
        // stand-in for systemd's notification socket.
        .target(name: "ProcessSupport", dependencies: [
            "ClickawaySystem", .product(name: "SystemPackage", package: "swift-system"),
        ], path: "Tests/Support/ProcessSupport"),
        // Xvfb, 13 window managers, client windows, XTest input.
        .target(name: "XTestHarness", dependencies: [
            "CXCB", "ClickawayX11", "ClickawayCore", "ClickawaySystem", "ProcessSupport",
            .product(name: "SystemPackage", package: "swift-system"),
        ], path: "Tests/Support/XTestHarness"),
        // The daemon, clickawayctl and real programs as processes, against Xvfb under 13 window
        // managers and headless sway, phoc and KWin. `swift test`
        // does not link executables: `make test` runs `swift build` first.
        .testTarget(name: "ClickawayE2ETests", dependencies: [
            "ClickawayCore", "ClickawayConfig", "ClickawayControl", "ClickawayX11", "XTestHarness",
            "ClickawayWayland", "WaylandHarness", "ProcessSupport", "ClickawaySystem", "ClickawayJSON",
            .product(name: "SystemPackage", package: "swift-system"),
        ]),
        .testTarget(name: "ClickawayX11Tests", dependencies: ["ClickawayX11", "XTestHarness", "ClickawayCore", "ProcessSupport"]),
        // libwayland-client, as a Clang module.
        .systemLibrary(name: "CWaylandClient", pkgConfig: "wayland-client", providers: [.apt(["libwayland-dev"])]),
        // wayland-scanner's client code for layer-shell, virtual pointers, KWin's fake input,
        // tablets, xdg-output and xdg-shell, committed; protocols/ holds the XML, its licences
        // and the script that regenerates it.
        .target(name: "CWaylandProtocols", dependencies: ["CWaylandClient"], exclude: ["protocols"]),
        // sd-bus's header, as a Clang module; libsystemd itself is opened at run time, on KWin
        // only (not linked: pkg-config's -lsystemd would map it into every daemon).
        .systemLibrary(name: "CSystemdBus", providers: [.apt(["libsystemd-dev"])]),
        // A safe Swift layer over sd-bus: bounded calls, and calls to one exported object held
        // until answered; what KWin's scripting speaks.
        .target(name: "ClickawayDBus", dependencies: [
            "CSystemdBus", .product(name: "SystemPackage", package: "swift-system"),
        ]),
        // A safe Swift layer over libwayland-client: the overlay, outputs, seat (pointer, touch,
        // pens), virtual pointer and fake input.
        .target(name: "ClickawayWayland", dependencies: [
            "CWaylandClient", "CWaylandProtocols", "ClickawayCore", "ClickawayJSON", "ClickawaySystem",
            .product(name: "SystemPackage", package: "swift-system"),
        ]),
        // Headless sway, phoc and KWin run for tests, a client below the overlay, injected
        // clicks and touches (test support).
        .target(name: "WaylandHarness", dependencies: [
            "CWaylandClient", "CWaylandProtocols", "ClickawayWayland", "ClickawayCore", "ClickawayJSON",
            "ClickawaySystem", "ProcessSupport",
        ], path: "Tests/Support/WaylandHarness"),
        .testTarget(name: "ClickawayWaylandTests", dependencies: [
            "ClickawayWayland", "WaylandHarness", "ClickawayCore", "ClickawayJSON", "ProcessSupport", "ClickawaySystem",
        ]),
        // The daemon's parts without a display: the roster, closing windows, the watcher's
        // debounce, lock combinations and button masks, systemd's notifications.
        .testTarget(name: "ClickawayDaemonTests", dependencies: [
            "ClickawayDaemon", "ClickawayCore", "ClickawayConfig", "ClickawayControl", "ClickawayJSON", "ClickawaySystem", "ClickawayWayland", "ClickawayX11",
            "ProcessSupport",
            .product(name: "Logging", package: "swift-log"),
            .product(name: "SystemPackage", package: "swift-system"),
        ]),
        // The control protocol's types, and the README and bench/clickbench.c held to them.
        .testTarget(name: "ClickawayControlTests", dependencies: ["ClickawayControl", "ClickawayCore", "ClickawayJSON", "ClickawaySystem"]),
        // Options, arguments and subcommands read, and the help, man pages and completion
        // scripts written from them.
        .testTarget(name: "ClickawayCommandLineTests", dependencies: [
            "ClickawayCommandLine", "ProcessSupport", .product(name: "PropertyBased", package: "swift-property-based"),
        ]),
        // The system layer's parts, without X or Wayland.
        .testTarget(name: "ClickawaySystemTests", dependencies: [
            "ClickawaySystem", "ProcessSupport", .product(name: "SystemPackage", package: "swift-system"),
        ]),
    ]
)

// A member is visible only where its module is imported: Foundation (or any other module)
// imported by one target cannot leak members into another that never asked for it, as
// ConfigLoader's `import Foundation` once gave clickaway a Foundation `contains`.
for target in package.targets where target.type == .regular || target.type == .executable {
    target.swiftSettings = (target.swiftSettings ?? []) + [.enableUpcomingFeature("MemberImportVisibility")]
}
