import CaskEngine
import CaskTestSupport
import CipherCask
import Foundation
import Synchronization

@testable import CipherCaskSync

/// A device's store that synced with a real Kinto, then saw the server change (two pages of
/// changes at page size 2) and queued changes of its own: the start of the crash-state
/// workload "a sync page applied with its cursor". Its steps open the store through the
/// recorder and run `sync()`, whose pull stores each page with the cursor that covers it in
/// one commit; every commit the sync makes is noted as a state a crash may leave.
///
/// Unchecked Sendable: the enumerator runs the workload's closures one at a time on one
/// thread; the sync they wait for runs in a task, and hands back only through `wait`.
final class KintoCrashFixture: @unchecked Sendable {
  let url: URL
  /// The collection on the server (one per run, so that runs can share a server).
  let remote: String
  /// Makes the pull store each page's cursor in a commit of its own first (a planted bug).
  let plantCursorFirst: Bool
  /// Makes the pull overwrite local changes (a planted bug).
  let plantLostUpdate: Bool

  /// The server's changes the pull brings: record id, `last_modified`, and the note (`nil`
  /// for a deletion).
  private(set) var serverChanges: [(recordID: String, modified: Int64, note: Note?)] = []
  /// The device's cursor before the recorded sync.
  private(set) var startCursor: Int64?
  /// The changes queued on the device before the recorded sync: id and note (`nil` for a
  /// deletion).
  let queued: [(id: String, note: Note?)] = [
    ("n1", Note(id: "n1", title: "local", count: 101)),
    ("n6", Note(id: "n6", title: "local", count: 6)),
    ("n3", nil),
  ]
  /// What the server holds once the recorded sync pushed (read at the first check).
  let serverAfterSync = Mutex<[String: Note]?>(nil)

  private var sync: CaskSync<Note>?
  private var observation: CaskObservation?
  /// The last contents a step read, the model after it.
  private var latest: [String: Data] = [:]

  static let titles = ["t", "server", "local"]

  init(url: URL, remote: String, plantCursorFirst: Bool = false, plantLostUpdate: Bool = false) {
    self.url = url
    self.remote = remote
    self.plantCursorFirst = plantCursorFirst
    self.plantLostUpdate = plantLostUpdate
  }

  static func notes(_ store: CaskStore) -> CaskCollection<Note> {
    store.collection(Note.self, named: "notes", indexes: [.index("title", \.title)])
  }

  func makeSync(_ store: CaskStore) throws -> CaskSync<Note> {
    var server = KintoServer(url: url, user: KintoProcess.user, password: KintoProcess.password)
    server.retry = RetryPolicy(attempts: 3, baseDelay: 0.05)
    server.timeout = 10
    server.pageSize = 2
    let sync = try CaskSync(Self.notes(store), server: server, bucket: "tests", collection: remote)
    sync.cache.withLock { cache in
      cache.plantedCursorFirst = plantCursorFirst
      cache.plantedLostUpdate = plantLostUpdate
    }
    return sync
  }

  /// The workload: open the store (and its sync), then one `sync()` under `.manual`.
  var workload: CrashStateWorkload {
    var options = CrashStateWorkload.defaultOptions
    // Room for most of the run in one segment (the states come from the sync, not from
    // seals), and not more: the writer reserves the segment's length in zeros, which every
    // crash image then holds.
    options.segmentSizeLimit = 16 << 10
    let planted = plantCursorFirst ? " (planted: cursor first)" : plantLostUpdate ? " (planted: lost update)" : ""
    var workload = CrashStateWorkload(
      "sync page with its cursor (Kinto)\(planted)", options: options,
      steps: [
        CrashStateWorkload.Step("open with sync", durable: true, effect: { [self] in $0 = latest }) { [self] session in
          let store = try session.store()
          sync = try makeSync(store)
          latest = try CrashStateWorkload.keyValues(store)
        },
        CrashStateWorkload.Step("sync", durable: true, effect: { [self] in $0 = latest }) { [self] session in
          try runSync(session)
        },
      ])
    workload.initialModelFromStore = true
    workload.prepare = { [self] root, options in try prepare(root, options) }
    workload.check = { [self] store, _ in try check(store) }
    return workload
  }

  /// Runs `sync()` with an observer that reads the store after every commit, and notes each
  /// commit's contents with the number of operations recorded by then.
  private func runSync(_ session: CrashStateSession) throws {
    let store = try session.store()
    let recorder = session.fileSystem
    let commits = Mutex<[(Int, [String: Data])]>([])
    let observation = store.observeChanges { _ in
      // On the committing thread, the commit's records written: what a crash from here may keep.
      let contents = (try? CrashStateWorkload.keyValues(store)) ?? [:]
      let reached = recorder.operationCount
      commits.withLock { $0.append((reached, contents)) }
    }
    defer { observation.cancel() }
    guard let sync else { throw KintoProcessError(description: "the sync was not made") }
    _ = try wait { try await sync.sync(conflicts: .manual) }
    for (reached, contents) in commits.withLock({ $0 }) {
      session.noteIntermediateState(contents, reachedAt: reached)
    }
    latest = try CrashStateWorkload.keyValues(store)
  }

  /// Lays out the start with the real file system: a first sync (pushing n0 to n3, then
  /// pulling them back), the server's changes, the device's queued changes.
  private func prepare(_ root: String, _ options: CaskStore.Options) throws {
    let store = try CaskStore(path: "\(root)/store", password: testPassword, options: options)
    defer { try? store.close() }
    let notes = Self.notes(store)
    let sync = try makeSync(store)
    for index in 0..<4 { try notes.save(Note(id: "n\(index)", title: "t", count: index)) }
    _ = try wait { try await sync.sync() }
    _ = try wait { try await sync.sync() }
    startCursor = try SyncLedger(collection: "notes").state(in: store)?.cursor
    guard let startCursor else { throw KintoProcessError(description: "the first sync stored no cursor") }
    let http = KintoHTTP(url, collection: remote)
    try wait {
      try await http.put(Note(id: "n1", title: "server", count: 11))
      try await http.put(Note(id: "n4", title: "server", count: 4))
      try await http.put(Note(id: "n5", title: "server", count: 5))
      try await http.delete("n2")
    }
    serverChanges = try wait { try await Self.changes(http, since: startCursor) }
    for (id, note) in queued {
      if let note { try notes.save(note) } else { try notes.delete(id: id) }
    }
  }

  /// The records and tombstones changed on the server after `cursor`.
  static func changes(_ http: KintoHTTP, since cursor: Int64) async throws -> [(
    recordID: String, modified: Int64, note: Note?
  )] {
    let (status, data, _) = try await http.request("GET", http.recordsPath + "?_since=\(cursor)&_limit=1000")
    guard status == 200, let object = try JSONSerialization.jsonObject(with: data) as? [String: Any],
      let records = object["data"] as? [[String: Any]]
    else { throw KintoProcessError(description: "the changes since the cursor could not be listed") }
    return try records.map { record in
      guard let id = record["id"] as? String, let modified = (record["last_modified"] as? NSNumber)?.int64Value
      else { throw KintoProcessError(description: "a record has no id or last_modified") }
      if record["deleted"] as? Bool == true { return (id, modified, nil) }
      let note = try record["object"].map {
        try JSONDecoder().decode(Note.self, from: JSONSerialization.data(withJSONObject: $0))
      }
      return (id, modified, note)
    }
  }
}
