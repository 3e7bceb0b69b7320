// swift-tools-version:6.0
import PackageDescription

let package = Package(
  name: "CipherCask",
  products: [
    .library(name: "RNCryptorCodec", targets: ["RNCryptorCodec"]),
    .library(name: "CaskEngine", targets: ["CaskEngine"]),
  ],
  targets: [
    .systemLibrary(
      name: "CLibCrypto",
      providers: [.apt(["libssl-dev"])]
    ),
    .target(
      name: "RNCryptorCodec",
      dependencies: ["CLibCrypto"]
    ),
    .target(
      name: "CaskEngine",
      dependencies: ["RNCryptorCodec"]
    ),
    .target(
      name: "CaskTestSupport",
      dependencies: ["CaskEngine"],
      path: "Tests/CaskTestSupport"
    ),
    .testTarget(
      name: "CaskEngineTests",
      dependencies: ["CaskEngine", "CaskTestSupport"]
    ),
    .testTarget(
      name: "RNCryptorCodecTests",
      dependencies: ["RNCryptorCodec", "CaskTestSupport"],
      resources: [.copy("Resources/vectors")]
    ),
  ],
  swiftLanguageModes: [.v6]
)
