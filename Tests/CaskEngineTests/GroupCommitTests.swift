import CaskTestSupport
import Foundation
import Testing

@testable import CaskEngine

@Suite("Group commit")
struct GroupCommitTests {
  @Test("8 concurrent writers under .always all succeed, and a power cut at any moment keeps every acknowledged put")
  func concurrentAlwaysWriters() throws {
    var random = SeededRandom.make(test: "group-commit")
    try withTemporaryDirectory("group-commit") { directory throws in
      let path = directory.file("store.cask")
      let disk = SyncTrackingFileSystem()
      let options = CaskStore.Options(
        durability: .always, segmentSizeLimit: 16 << 10, autoCompaction: nil, fileSystem: disk)
      let store = try CaskStore(path: path, password: "pw", options: options)
      let writers = 8
      let puts = testIterations(40)
      let log = PowerCutLog(writers: writers)
      let shared = SharedProgress(writers: writers)

      // Each writer puts fresh keys in order and counts a put only after it returned.
      var bodies: [@Sendable () throws -> Void] = (0..<writers).map { writer in
        {
          defer { shared.writersRunning.subtract(1, ordering: .releasing) }
          for index in 0..<puts {
            let key = Self.key(writer: writer, index: index)
            try store.put(ThreadValue.make(key: key, version: index), forKey: key)
            log.acknowledged.withLock { $0[writer] = index + 1 }
          }
        }
      }
      // Meanwhile, power cuts: images of what the disk holds durably at random moments, each
      // paired with the puts acknowledged before it was taken.
      let pauses = (0..<8).map { _ in UInt32(500 + random.next() % 4_000) }
      bodies.append {
        for (number, pause) in pauses.enumerated() {
          usleep(pause)
          let before = log.acknowledged.withLock { $0 }
          let image = directory.file("cut-\(number).cask")
          try disk.writeDurableImage(of: path, to: image)
          log.cuts.withLock { $0.append((image, before)) }
          if shared.writersRunning.load(ordering: .acquiring) == 0 { break }
        }
      }
      runOnThreads(bodies, failures: shared)
      let problems = shared.failures.withLock { $0 }
      #expect(problems.isEmpty, "\(problems.prefix(10).joined(separator: "\n"))")
      // The last cut comes after every put returned: all of them must be in it.
      try disk.writeDurableImage(of: path, to: directory.file("cut-final.cask"))
      log.cuts.withLock { $0.append((directory.file("cut-final.cask"), Array(repeating: puts, count: writers))) }
      print("[group-commit] \(writers * puts) acknowledged puts shared \(disk.syncCount) syncs")

      for cut in log.cuts.withLock({ $0 }) {
        let survivor = try CaskStore(path: cut.image, password: "pw", options: CaskStore.Options(autoCompaction: nil))
        let recovery = survivor.stats().recovery
        #expect(recovery.corruptRegions.isEmpty && recovery.unreadableSegments.isEmpty)
        for writer in 0..<writers {
          for index in 0..<puts {
            let key = Self.key(writer: writer, index: index)
            let found = try survivor.get(key)
            if index < cut.acknowledged[writer] {
              #expect(found == ThreadValue.make(key: key, version: index), "acknowledged \(key) lost by a power cut")
            } else if let found {
              #expect(found == ThreadValue.make(key: key, version: index), "\(key) holds a value never written")
            }
          }
        }
        #expect(try survivor.verify().isClean)
        try survivor.close()
      }

      try store.close()
      let reopened = try CaskStore(path: path, password: "pw", options: CaskStore.Options(autoCompaction: nil))
      #expect(reopened.count == writers * puts)
      for writer in 0..<writers {
        for index in 0..<puts {
          let key = Self.key(writer: writer, index: index)
          #expect(try reopened.get(key) == ThreadValue.make(key: key, version: index))
        }
      }
      try reopened.close()
    }
  }

  static func key(writer: Int, index: Int) -> String { "writer\(writer)/\(index)" }
}

/// The puts each writer has had acknowledged, and the power-cut images taken so far, each with
/// the acknowledgements that preceded it.
private final class PowerCutLog: Sendable {
  let acknowledged: Locked<[Int]>
  let cuts = Locked<[(image: String, acknowledged: [Int])]>([])

  init(writers: Int) {
    acknowledged = Locked(Array(repeating: 0, count: writers))
  }
}

/// The real file system, plus a record of each file's contents as of the start of its last
/// completed `sync()`: what a power cut would surely leave of it. Directory changes count as durable at once, so this models
/// the loss of unsynced file data only (enough for group commit, which syncs data).
final class SyncTrackingFileSystem: ForwardingFileSystem, @unchecked Sendable {
  private struct State {
    var nextFile = 0
    /// The tracked file each path names (renames move the entry).
    var files: [String: Int] = [:]
    /// Contents of each tracked file as of its last sync.
    var durable: [Int: Data] = [:]
    /// When the sync that produced `durable` started.
    var durableStamp: [Int: Int] = [:]
    var nextStamp = 0
    var syncs = 0
  }

  private let state = Locked(State())

  var syncCount: Int { state.withLock { $0.syncs } }

  override func open(_ path: String, mode: FileOpenMode) throws -> any StorageFile {
    let file = try super.open(path, mode: mode)
    // A file that existed before it was opened here is taken to be durable as it is.
    let existing = mode == .createNew ? Data() : try file.read(count: Int(try file.size()), at: 0)
    let id = state.withLock { state -> Int in
      if mode != .createNew, let id = state.files[path] { return id }
      defer { state.nextFile += 1 }
      state.files[path] = state.nextFile
      state.durable[state.nextFile] = existing
      return state.nextFile
    }
    return TrackedFile(file, id: id, owner: self)
  }

  /// Called by a tracked file as a sync starts: its contents now are what the sync makes
  /// durable (writes racing with the sync may or may not be; this counts them out).
  fileprivate func syncStarts(_ file: any StorageFile) throws -> (stamp: Int, contents: Data) {
    try state.withLock { state in
      defer { state.nextStamp += 1 }
      // `upTo`: sealing a segment cuts its reserved zeros, which may shorten the file between
      // `size()` and the read while another writer's sync of it is under way.
      return (state.nextStamp, try file.read(upTo: Int(try file.size()), at: 0))
    }
  }

  /// Called by a tracked file once the sync returned. Of two syncs racing on one file, the one
  /// that started later wins.
  fileprivate func syncEnded(_ id: Int, stamp: Int, contents: Data) {
    state.withLock { state in
      state.syncs += 1
      guard stamp > state.durableStamp[id, default: -1] else { return }
      state.durable[id] = contents
      state.durableStamp[id] = stamp
    }
  }

  /// Writes the durable contents of every tracked file under `directory` into a new
  /// directory `image`: the store as a power cut now would leave it.
  func writeDurableImage(of directory: String, to image: String) throws {
    let prefix = directory + "/"
    let files = state.withLock { state in
      state.files.compactMap { path, id -> (String, Data)? in
        guard path.hasPrefix(prefix), let data = state.durable[id] else { return nil }
        return (String(path.dropFirst(prefix.count)), data)
      }
    }
    try FileManager.default.createDirectory(atPath: image, withIntermediateDirectories: true)
    for (name, data) in files {
      try data.write(to: URL(fileURLWithPath: image).appendingPathComponent(name))
    }
  }

  override func removeFile(_ path: String) throws {
    try super.removeFile(path)
    state.withLock { _ = $0.files.removeValue(forKey: path) }
  }

  override func rename(_ source: String, to destination: String) throws {
    try super.rename(source, to: destination)
    moved(source, to: destination)
  }

  override func renameNoReplace(_ source: String, to destination: String) throws {
    try super.renameNoReplace(source, to: destination)
    moved(source, to: destination)
  }

  private func moved(_ source: String, to destination: String) {
    state.withLock { state in
      state.files[destination] = state.files.removeValue(forKey: source)
    }
  }
}

/// A file of `SyncTrackingFileSystem`: each sync hands the owner the contents it covers.
private final class TrackedFile: ForwardingStorageFile, @unchecked Sendable {
  let id: Int
  let owner: SyncTrackingFileSystem

  init(_ base: any StorageFile, id: Int, owner: SyncTrackingFileSystem) {
    self.id = id
    self.owner = owner
    super.init(base)
  }

  override func sync() throws {
    let (stamp, contents) = try owner.syncStarts(base)
    try base.sync()
    owner.syncEnded(id, stamp: stamp, contents: contents)
  }
}
