import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// The entry point of a fuzz target built without `--sanitize=fuzzer`.
///
/// Under `swift build --sanitize=fuzzer`, SwiftPM compiles every module with
/// `-parse-as-library` and links libFuzzer's own `main`, so a fuzz target must define no Swift
/// entry point. A plain build (`swift build`, `swift test`) instead links each executable with
/// `main` renamed from `<module>_main`, which must then exist. Each target therefore declares
/// `@_cdecl("<module>_main")` in a second source file (two files, so that neither is taken for
/// a main file) and forwards here: the plain binary replays inputs once each, and writes the
/// target's seed corpus. See Docs/RELIABILITY.md, "Fuzzing".
package enum FuzzReplay {
  /// Runs `cask-fuzz-TARGET [--make-corpus DIR] [FILE|DIR...]`.
  ///
  /// - Parameters:
  ///   - arguments: the command line, program name first.
  ///   - test: the target's `LLVMFuzzerTestOneInput` body.
  ///   - seeds: the target's seed inputs by file name, for `--make-corpus`.
  /// - Returns: the exit status.
  package static func run(
    arguments: [String], test: (UnsafeRawBufferPointer) -> Void, seeds: () throws -> [(String, Data)]
  ) -> Int32 {
    let name = arguments.first.map { URL(fileURLWithPath: $0).lastPathComponent } ?? "fuzz"
    var inputs = Array(arguments.dropFirst())
    if inputs.first == "--make-corpus" {
      guard inputs.count == 2 else {
        FileHandle.standardError.write(Data("usage: \(name) --make-corpus DIR\n".utf8))
        return 64
      }
      do {
        try FileManager.default.createDirectory(atPath: inputs[1], withIntermediateDirectories: true)
        let made = try seeds()
        for (file, bytes) in made {
          try bytes.write(to: URL(fileURLWithPath: inputs[1]).appendingPathComponent(file))
        }
        print("\(name): wrote \(made.count) seeds to \(inputs[1])")
        return 0
      } catch {
        FileHandle.standardError.write(Data("\(name): \(error)\n".utf8))
        return 1
      }
    }
    inputs.removeAll { $0.hasPrefix("-") }
    guard !inputs.isEmpty else {
      print(
        """
        usage: \(name) FILE|DIR...          run each input once (a plain build, no libFuzzer)
               \(name) --make-corpus DIR    write the seed corpus
        Run `scripts/fuzz.sh \(name) SECONDS` to fuzz (it builds with the right flags).
        """)
      return 64
    }
    var files: [String] = []
    for input in inputs {
      var isDirectory: ObjCBool = false
      guard FileManager.default.fileExists(atPath: input, isDirectory: &isDirectory) else {
        FileHandle.standardError.write(Data("\(name): no such file: \(input)\n".utf8))
        return 1
      }
      if isDirectory.boolValue {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: input)) ?? []
        files += names.sorted().map { input + "/" + $0 }
      } else {
        files.append(input)
      }
    }
    for file in files {
      guard let bytes = FileManager.default.contents(atPath: file) else { continue }
      bytes.withUnsafeBytes { test($0) }
    }
    print("\(name): \(files.count) inputs ran without a crash")
    return 0
  }

  /// The command line handed to a C `main`.
  package static func arguments(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> [String] {
    guard let argv else { return [] }
    return (0..<Int(argc)).compactMap { argv[$0].map { String(cString: $0) } }
  }

  /// Fails the run the way libFuzzer notices: a trap, with a message on stderr.
  package static func check(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition { fatalError("fuzz invariant broken: \(message())") }
  }
}

/// Reads a fuzz input as a sequence of small decisions followed by bytes.
package struct FuzzInput {
  private let bytes: UnsafeRawBufferPointer
  private var offset = 0

  package init(_ bytes: UnsafeRawBufferPointer) {
    self.bytes = bytes
  }

  /// Bytes not yet taken.
  package var remaining: Int { bytes.count - offset }

  /// The next byte, or 0 past the end.
  package mutating func byte() -> UInt8 {
    guard offset < bytes.count else { return 0 }
    defer { offset += 1 }
    return bytes[offset]
  }

  /// Up to `count` next bytes.
  package mutating func take(_ count: Int) -> Data {
    let taken = min(max(0, count), remaining)
    defer { offset += taken }
    return Data(bytes[offset..<offset + taken])
  }

  /// Everything not yet taken.
  package mutating func rest() -> Data {
    take(remaining)
  }
}
