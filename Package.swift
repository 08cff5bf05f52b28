// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "clickaway",
    platforms: [.macOS(.v13)],
    products: [
        .executable(name: "clickaway", targets: ["clickaway"]),
        .executable(name: "clickawayctl", targets: ["clickawayctl"]),
        .library(name: "ClickawayCore", targets: ["ClickawayCore"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/LebJe/TOMLKit", exact: "0.6.0"),
        .package(url: "https://github.com/x-sheep/swift-property-based", from: "2.0.1"),
    ],
    targets: [
        // Geometry, region tree, popups and the decision engine: no X, no Foundation.
        .target(name: "ClickawayCore"),
        // TOML → core model, diagnostics with file/line/caret, XDG lookup.
        .target(name: "ClickawayConfig", dependencies: [
            "ClickawayCore",
            .product(name: "TOMLKit", package: "TOMLKit"),
        ]),
        .executableTarget(name: "clickaway", dependencies: [
            "ClickawayCore", "ClickawayConfig",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ]),
        .executableTarget(name: "clickawayctl", dependencies: [
            "ClickawayCore", "ClickawayConfig",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ]),
        .testTarget(name: "ClickawayCoreTests", dependencies: [
            "ClickawayCore",
            .product(name: "PropertyBased", package: "swift-property-based"),
        ]),
        .testTarget(name: "ClickawayConfigTests", dependencies: ["ClickawayConfig", "ClickawayCore"]),
    ]
)
