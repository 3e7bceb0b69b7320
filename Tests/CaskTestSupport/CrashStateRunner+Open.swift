import CaskEngine
import Foundation

/// Which distinct crash images `scripts/read-store.py` reads: a Python process per image costs
/// more than the store's own open, so `swift test` reads a seeded share and the long mode all.
public enum ReaderSample: Sendable, Equatable {
  /// Every image.
  case every
  /// About `percent` in a hundred images, picked by a hash of the image's bytes and `seed`, so
  /// that a seed picks the same images in every run, whatever order the states come in.
  case share(percent: Int, seed: UInt64)

  /// Every image in the long mode (`CASK_CRASH_STATES_LONG`); otherwise one in ten (or
  /// `CASK_CRASH_STATES_READER_PERCENT` in a hundred), seeded from `CASK_TEST_SEED` (printed)
  /// or from the clock: every image would add minutes to `swift test` (a Python process and
  /// its imports per image).
  public static var fromEnvironment: ReaderSample {
    if CrashStateBounds.isLong { return .every }
    let percent = ProcessInfo.processInfo.environment["CASK_CRASH_STATES_READER_PERCENT"].flatMap { Int($0) } ?? 10
    if percent >= 100 { return .every }
    let seed = SeededRandom.make(test: "crash-states reader sample").seed
    return .share(percent: percent, seed: seed)
  }

  /// Whether the image is read.
  func picks(_ image: CrashImage) -> Bool {
    switch self {
    case .every: return true
    case .share(let percent, let seed):
      // FNV-1a over the paths, lengths and every 61st byte, started from the seed: enough to
      // tell the images of a workload apart, and cheap on a segment with a megabyte reserved.
      var hash: UInt64 = 0xcbf2_9ce4_8422_2325 ^ seed
      func mix(_ byte: UInt8) { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
      for path in image.files.keys.sorted() {
        for byte in path.utf8 { mix(byte) }
        let bytes = image.files[path] ?? []
        for shift in stride(from: 0, to: 64, by: 8) { mix(UInt8(truncatingIfNeeded: bytes.count >> shift)) }
        for index in stride(from: 0, to: bytes.count, by: 61) { mix(bytes[index]) }
      }
      for path in image.directories { for byte in path.utf8 { mix(byte) } }
      return Int(hash % 100) < percent
    }
  }
}

extension CrashStateRunner {
  /// Writes `image` into a fresh directory under `scratch`, has the reader read it (if
  /// picked), then opens the store there with the real file system and checks it.
  func open(
    _ image: CrashImage, of workload: CrashStateWorkload, tokens: [Int: String], in scratch: TemporaryDirectory
  ) throws -> Outcome {
    let root = scratch.file("image-\(UUID().uuidString.prefix(8))")
    try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: root) }
    try image.write(to: root)
    var outcome = Outcome()
    let path = "\(root)/\(workload.storeName)"
    // Before the store opens it: an open repairs a torn tail the reader must see as it is.
    var readerEntries: Result<[Data: Data], StoreReaderScript.ReaderFailure>?
    if let reader = independentReader, workload.independentlyReadable, readerSample.picks(image),
      FileManager.default.fileExists(atPath: "\(path)/CASK")
    {
      readerEntries = reader.read(path, passwords: workload.passwords)
      outcome.readerRan = true
    }
    var options = workload.options
    options.fileSystem = PosixFileSystem()
    var store: CaskStore?
    var lastError: (any Error)?
    for password in workload.passwords {
      do {
        store = try CaskStore(path: path, password: password, options: options)
        break
      } catch CaskError.wrongPassword {
        lastError = CaskError.wrongPassword
      } catch {
        lastError = error
        break
      }
    }
    guard let store else {
      outcome.failure = lastError.map { "\($0)" }
      return outcome
    }
    defer { try? store.close() }
    do {
      // Read before the workload's own reads and checks: declaring a collection's indexes on
      // a store that lacks them builds them, which writes.
      let served = try readerEntries.map { _ in try Self.everyEntry(of: store) }
      // What open found of the state as the crash left it: it repairs a torn tail, after
      // which `verify()` may find the damage before it only as zeros at the end.
      let recovery = store.stats().recovery
      let damagedAtOpen = !recovery.corruptRegions.isEmpty || !recovery.unreadableSegments.isEmpty
      outcome.contents = try workload.contents(store)
      outcome.damage = try store.verify().damage.map { "\($0)" }
      for (step, token) in tokens {
        outcome.fresh[step] = (try? store.checkFreshness(against: token)) != nil
      }
      outcome.problems += try workload.check(store, root)
      if let readerEntries, let served {
        compare(readerEntries, with: served, damaged: damagedAtOpen || !outcome.damage.isEmpty, into: &outcome)
      }
    } catch {
      outcome.contents = nil
      outcome.failure = "opened, then failed: \(error)"
    }
    return outcome
  }

  /// Every key the store serves (its reserved groups too) as bytes, with its value.
  static func everyEntry(of store: CaskStore) throws -> [Data: Data] {
    var entries: [Data: Data] = [:]
    for key in try store.keys() { entries[Data(key.utf8)] = try store.get(key) }
    return entries
  }

  /// Holds the reader to the engine: where it reads a state, every key the engine serves
  /// (`keys()` lists them all, the collection layer's reserved groups too) with the same value,
  /// and no other key; it may refuse a state only where the engine reports damage (at open, in
  /// the recovery report, or in `verify()`), since it stops at damage inside a segment that
  /// the engine's scan passes over (Docs/FORMAT.md, section 9).
  private func compare(
    _ result: Result<[Data: Data], StoreReaderScript.ReaderFailure>, with engine: [Data: Data], damaged: Bool,
    into outcome: inout Outcome
  ) {
    switch result {
    case .failure(let failure):
      if !damaged {
        outcome.readerProblem =
          "scripts/read-store.py refuses a state in which the engine finds no damage: \(failure.message)"
      } else {
        outcome.readerRefusedDamage = true
      }
    case .success(let entries):
      guard entries != engine else { return }
      let missing = engine.keys.filter { entries[$0] == nil }.count
      let extra = entries.keys.filter { engine[$0] == nil }.count
      let other = engine.keys.filter { entries[$0] != nil && entries[$0] != engine[$0] }.count
      outcome.readerProblem =
        "scripts/read-store.py reads other contents than the engine: \(missing) keys missing, \(extra) more, "
        + "\(other) other values"
    }
  }
}
