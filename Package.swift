// swift-tools-version:6.0
import PackageDescription

let package = Package(
  name: "CipherCask",
  products: [
    .library(name: "RNCryptorCodec", targets: ["RNCryptorCodec"])
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
      name: "CaskTestSupport",
      path: "Tests/CaskTestSupport"
    ),
    .testTarget(
      name: "RNCryptorCodecTests",
      dependencies: ["RNCryptorCodec", "CaskTestSupport"],
      resources: [.copy("Resources/vectors")]
    ),
  ],
  swiftLanguageModes: [.v6]
)
