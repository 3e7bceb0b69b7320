import CaskTestSupport
import Foundation
import RNCryptorCodec
import Synchronization
import Testing

@testable import CaskEngine

/// `compact()` seals the active segment under the writer lock, so every write waits for what
/// it does there. What is slow (writing out the segment's unsynced bytes, encrypting and syncing
/// its hint) happens outside the lock. An automatic compaction seals nothing (it merges the
/// sealed segments only) and copies at a lower CPU priority than the application's threads.
@Suite("Compaction: writes go on while a compaction seals and copies")
struct CompactionWriterStallTests {
  /// The real file system, with one call held at a gate: the first matching call after
  /// `arm()` waits until `release()` (or 20 s), so a test can write while it is held.
  final class GatedFileSystem: ForwardingFileSystem, @unchecked Sendable {
    enum Gate: Sendable {
      /// The sync of a segment file.
      case segmentSync
      /// The open of a hint's temporary file.
      case hintWrite
    }

    /// The nice value of a compaction thread at a call, and what the call was.
    struct Observation: Sendable {
      var call: String
      var nice: Int32?
    }

    private let gate: Gate?
    private let armed = Atomic(false)
    private let entered = DispatchSemaphore(value: 0)
    private let released = DispatchSemaphore(value: 0)
    let observations = Locked([Observation]())

    init(gate: Gate?) {
      self.gate = gate
      super.init()
    }

    func arm() { armed.store(true, ordering: .releasing) }

    /// Waits up to 20 s for the gate to hold a call.
    func waitUntilHeld() -> Bool { entered.wait(timeout: .now() + 20) == .success }

    func release() { released.signal() }

    /// Holds the caller when the gate is armed and `gate` is its gate (once).
    func pass(_ kind: Gate) {
      guard kind == gate,
        armed.compareExchange(expected: true, desired: false, ordering: .acquiringAndReleasing).exchanged
      else { return }
      entered.signal()
      _ = released.wait(timeout: .now() + 20)
    }

    func observe(_ call: String) {
      // The mark `BackgroundWork` gives its threads (under `.never` there is no periodic syncer).
      guard Thread.current.threadDictionary["CipherCask.background"] != nil else { return }
      let nice = Syscall.threadNiceValue()
      observations.withLock { $0.append(Observation(call: call, nice: nice)) }
    }

    override func open(_ path: String, mode: FileOpenMode) throws -> any StorageFile {
      if path.hasSuffix(".hint" + CaskFormat.temporarySuffix) { pass(.hintWrite) }
      if path.hasSuffix(".seg" + CaskFormat.temporarySuffix) { observe("open output") }
      let file = try super.open(path, mode: mode)
      // A segment is created under its temporary name and keeps the file opened so.
      let isSegment = path.hasSuffix(".seg") || path.hasSuffix(".seg" + CaskFormat.temporarySuffix)
      return isSegment ? GatedFile(file, owner: self) : file
    }
  }

  final class GatedFile: StorageFile, @unchecked Sendable {
    let base: any StorageFile
    let owner: GatedFileSystem
    var path: String { base.path }

    init(_ base: any StorageFile, owner: GatedFileSystem) {
      self.base = base
      self.owner = owner
    }

    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws -> Int {
      try base.read(into: buffer, at: offset)
    }
    func readMapped(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) -> Bool {
      base.readMapped(into: buffer, at: offset)
    }
    func write(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws { try base.write(bytes, at: offset) }
    func writeMapped(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) -> Bool {
      base.writeMapped(bytes, at: offset)
    }
    func sync() throws {
      owner.observe("sync segment")
      owner.pass(.segmentSync)
      try base.sync()
    }
    func startWriteback(from offset: UInt64, count: UInt64) { base.startWriteback(from: offset, count: count) }
    func size() throws -> UInt64 { try base.size() }
    func truncate(to length: UInt64) throws { try base.truncate(to: length) }
    func close() { base.close() }
  }

  private static let keys = try! RNCryptor.Keys(
    encryptionKey: Data(repeating: 0x3C, count: 32), hmacKey: Data(repeating: 0xC3, count: 32))

  /// A store with puts and deletes behind it (dead bytes to compact): in its active segment,
  /// or, with a `segmentSizeLimit` below the batch of puts, the puts in a sealed segment.
  private static func filledStore(
    _ path: String, fileSystem: GatedFileSystem, auto: CaskStore.AutoCompaction? = nil,
    segmentSizeLimit: UInt64 = 256 << 20
  ) throws -> CaskStore {
    let options = CaskStore.Options(
      durability: .never, segmentSizeLimit: segmentSizeLimit, autoCompaction: auto, fileSystem: fileSystem)
    let store = try CaskStore(path: path, keys: keys, options: options)
    try store.batch { batch in
      for number in 0..<2_000 { try batch.put(Data(repeating: UInt8(number % 251), count: 200), forKey: "k\(number)") }
    }
    for number in stride(from: 0, to: 2_000, by: 2) { try store.delete("k\(number)") }
    return store
  }

  /// Starts `store.compact()` on a thread of its own; the returned semaphore is signalled when
  /// it returned, and `failure` holds its error.
  private static func compactInBackground(_ store: CaskStore, failure: Locked<String?>) -> DispatchSemaphore {
    let done = DispatchSemaphore(value: 0)
    Thread {
      do { _ = try store.compact() } catch { failure.withLock { $0 = "\(error)" } }
      done.signal()
    }.start()
    return done
  }

  /// Runs a compaction with `gate` holding its first matching call, and answers whether a
  /// put on another thread returned within 5 s while the call was held.
  private static func putWhileHeld(_ gate: GatedFileSystem.Gate, label: String) throws -> Bool {
    try withTemporaryDirectory(label) { directory in
      let fileSystem = GatedFileSystem(gate: gate)
      let store = try filledStore(directory.file("store"), fileSystem: fileSystem)
      let failure = Locked<String?>(nil)
      fileSystem.arm()
      let compaction = compactInBackground(store, failure: failure)
      try #require(fileSystem.waitUntilHeld(), "the compaction never reached the gate")
      let put = DispatchSemaphore(value: 0)
      Thread {
        _ = try? store.put(Data("during".utf8), forKey: "written-while-held")
        put.signal()
      }.start()
      let returned = put.wait(timeout: .now() + 5) == .success
      fileSystem.release()
      if !returned { #expect(put.wait(timeout: .now() + 60) == .success) }
      #expect(compaction.wait(timeout: .now() + 60) == .success)
      #expect(failure.withLock { $0 } == nil)
      // Nothing was lost by the write that went on beside the compaction.
      #expect(try store.get("written-while-held") == Data("during".utf8))
      #expect(try store.get("k1") == Data(repeating: 1, count: 200))
      #expect(try store.get("k0") == nil)
      try store.close()
      let reopened = try CaskStore(
        path: directory.file("store"), keys: keys, options: CaskStore.Options(durability: .never))
      defer { try? reopened.close() }
      #expect(try reopened.get("written-while-held") == Data("during".utf8))
      #expect(try reopened.get("k1") == Data(repeating: 1, count: 200))
      #expect(try reopened.get("k0") == nil)
      #expect(reopened.count == 1_001)
      return returned
    }
  }

  @Test("a put returns while the compaction writes out the active segment's unsynced bytes")
  func putGoesOnDuringTheSyncBeforeTheSeal() throws {
    #expect(try Self.putWhileHeld(.segmentSync, label: "compaction-stall-sync"))
  }

  @Test("a put returns while the hint of the segment a compaction sealed is written")
  func putGoesOnDuringTheSealedSegmentsHint() throws {
    #expect(try Self.putWhileHeld(.hintWrite, label: "compaction-stall-hint"))
  }

  @Test("an automatic compaction seals nothing and copies at a lower priority than the writer's")
  func automaticCompactionCopiesAtLowerPriority() throws {
    #if os(Linux)
      let base = try #require(Syscall.threadNiceValue())
      for increment: Int32 in [0, 10] {
        try withTemporaryDirectory("compaction-nice-\(increment)") { directory in
          let fileSystem = GatedFileSystem(gate: nil)
          let auto = CaskStore.AutoCompaction(deadRatio: 0.3, minimumDeadBytes: 1, niceIncrement: increment)
          // The batch of puts is sealed by the first delete, which does not fit beside it.
          let store = try Self.filledStore(
            directory.file("store"), fileSystem: fileSystem, auto: auto, segmentSizeLimit: 64 << 10)
          // Overwrites go on until the policy's check has run and a compaction copied something:
          // every key stays live, so a compaction that starts late still has records to copy.
          var number = 1
          let deadline = Date().addingTimeInterval(60)
          while fileSystem.observations.withLock({ !$0.contains { $0.call == "open output" } }), Date() < deadline {
            try store.put(Data(repeating: 7, count: 200), forKey: "k\(number)")
            number = (number + 2) % 2_000
          }
          store.waitForCompaction()
          let seen = fileSystem.observations.withLock { $0 }
          try store.close()
          #expect(seen.contains { $0.call == "open output" }, "no automatic compaction wrote an output")
          // Its syncs are of its outputs and of the writer's segment, none of them a seal
          // under the writer lock: all of them at the lower priority.
          for observation in seen {
            #expect(
              observation.nice == min(19, base + increment),
              "\(observation.call) ran at nice \(String(describing: observation.nice)) with an increment of \(increment)"
            )
          }
        }
      }
    #endif
  }
}
