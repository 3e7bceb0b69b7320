import CaskEngine
import Foundation
import PeerKit
import RNCryptorCodec

/// `cask-bench recovery`: what a damaged stretch inside a segment costs an open. A store of
/// 1 MiB values in one segment is opened read-only without its hint, intact and then with
/// pseudo-random bytes over records in its middle, which the scan crosses offset by offset
/// (Docs/FORMAT.md, section 9); the damaged open must find exactly the records outside them.
/// Then what the password's key derivation costs an open, scrypt against PBKDF2.
enum RecoveryCommand: BenchCommand {
  static let name = "recovery"
  static let abstract =
    "Open of a segment with a damaged stretch: how fast the scan crosses damage to the next record; "
    + "the cost of the password's key derivation at open."
  static let options: [(flag: String, help: String)] = [
    ("--quick", "8 MiB of damage in a 16 MiB segment, 3 opens each, instead of 64 in 96 and 5."),
    ("--dir DIR", "Where the scratch store goes (default /tmp)."),
    ResultsDestination.option,
  ]

  static func run(arguments: [String]) throws {
    var options = Options(arguments, of: Self.self)
    let quick = options.flag("--quick")
    let (damage, intact, runs) = quick ? (8, 8, 3) : (64, 32, 5)
    try options.measure { results, scratch in
      let opens = try measure(in: scratch, damageMiB: damage, intactMiB: intact, runs: runs)
      let derivations = try measureKeyDerivation(in: scratch, runs: runs)
      try results.write(
        Figures(segmentMiB: damage + intact, damageMiB: damage, opens: opens, keyDerivations: derivations))
    }
  }

  /// What `recovery.json` holds.
  struct Figures: Codable {
    /// The segment opened without its hint, and the stretch of it damaged.
    let segmentMiB: Int
    let damageMiB: Int
    /// Read-only opens of the intact segment, then of the damaged one.
    let opens: [TimedRuns]
    /// Opens of an empty store, one row per header key derivation.
    let keyDerivations: [TimedRuns]
  }

  static func measure(in directory: String, damageMiB: Int, intactMiB: Int, runs: Int) throws -> [TimedRuns] {
    let path = "\(directory)/store.cask"
    let keys = try RNCryptor.Keys.random()
    let valueBytes = 1 << 20
    let count = damageMiB + intactMiB
    var options = CaskStore.Options(durability: .never, segmentSizeLimit: UInt64(count + 8) << 20, autoCompaction: nil)
    printToStandardError("recovery: writing \(count) values of 1 MiB")
    let store = try CaskStore(path: path, keys: keys, options: options)
    var value = Data(count: valueBytes)
    for index in 0..<count {
      value[0] = UInt8(truncatingIfNeeded: index)
      try store.put(value, forKey: "value-\(index)")
    }
    try store.close()
    let files = try FileManager.default.contentsOfDirectory(atPath: path)
    for name in files where name.hasSuffix("." + CaskFormat.hintExtension) {
      try FileManager.default.removeItem(atPath: "\(path)/\(name)")
    }
    let segments = files.filter { $0.hasSuffix("." + CaskFormat.segmentExtension) }
    guard segments.count == 1, let segment = segments.first else {
      throw BenchError("expected one segment, found \(segments.count)")
    }
    options.readOnly = true

    func opens(expectingKeys expected: Int, regions: Int) throws -> [Double] {
      try (0..<runs).map { _ in
        let (opened, seconds) = try Stopwatch.timed { try CaskStore(path: path, keys: keys, options: options) }
        let recovery = opened.stats().recovery
        let found = opened.count
        try opened.close()
        guard found == expected, recovery.corruptRegions.count == regions else {
          throw BenchError(
            "open found \(found) keys and \(recovery.corruptRegions.count) damaged regions; "
              + "expected \(expected) and \(regions)")
        }
        return seconds
      }
    }
    printToStandardError("recovery: \(runs) read-only opens of the intact segment")
    let clean = try opens(expectingKeys: count, regions: 0)

    // Damage from 1 MiB + 100 bytes (inside the second record) for `damageMiB` MiB: the
    // records it touches are lost, the rest must be found.
    let segmentPath = "\(path)/\(segment)"
    let handle = try FileHandle(forUpdating: URL(fileURLWithPath: segmentPath))
    let start = UInt64(valueBytes + 100)
    var state: UInt64 = 0x9E37_79B9_7F4A_7C15
    var noise = [UInt8](repeating: 0, count: damageMiB << 20)
    for index in noise.indices {
      state ^= state << 13
      state ^= state >> 7
      state ^= state << 17
      noise[index] = UInt8(truncatingIfNeeded: state)
    }
    try handle.seek(toOffset: start)
    try handle.write(contentsOf: noise)
    try handle.close()
    // The first damaged record starts at 32 (the segment header) + one record; the stretch
    // ends inside the record after its last whole MiB, so `damageMiB + 1` records are lost.
    printToStandardError("recovery: \(runs) read-only opens with \(damageMiB) MiB of damage")
    let damaged = try opens(expectingKeys: count - damageMiB - 1, regions: 1)

    return [TimedRuns(name: "intact", seconds: clean), TimedRuns(name: "\(damageMiB) MiB damaged", seconds: damaged)]
  }

  /// What the header's key derivation adds to every open of a password store: an empty store
  /// opened read-only `runs` times with each derivation, so that the figure is the derivation
  /// and nothing else. It is also what one offline guess of the password costs on this machine
  /// (Docs/SECURITY.md, section 2).
  static func measureKeyDerivation(in directory: String, runs: Int) throws -> [TimedRuns] {
    let derivations: [(String, CaskStore.KeyDerivation)] = [
      ("scrypt N=2^15 r=8 p=1 (default)", .standard), ("rncryptor (PBKDF2, 2 x 10,000)", .rncryptor),
    ]
    return try derivations.enumerated().map { index, item in
      let (label, derivation) = item
      let path = "\(directory)/kdf-\(index).cask"
      var options = CaskStore.Options(durability: .never, autoCompaction: nil)
      options.keyDerivation = derivation
      try CaskStore(path: path, password: "bench password", options: options).close()
      options.readOnly = true
      printToStandardError("recovery: \(runs) opens of an empty store, \(derivation.name) header")
      let times = try (0..<runs).map { _ in
        try Stopwatch.seconds { try CaskStore(path: path, password: "bench password", options: options).close() }
      }
      return TimedRuns(name: label, seconds: times)
    }
  }
}
