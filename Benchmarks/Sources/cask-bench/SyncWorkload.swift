import CipherCask
import CipherCaskSync
import Foundation
import PeerKit
import RNCryptorCodec

/// One round of `cask-bench sync`: two devices and plain HTTP against one Kinto, every step
/// checked (a step that moved other counts than it should fails the run, so that no figure is
/// the time of something else).
struct SyncWorkload: Sendable {
  /// What one step did.
  struct Measured: Sendable {
    let phase: SyncCommand.Phase
    let objects: Int
    let seconds: Double
    let traffic: KintoRawClient.Traffic
    /// What crossed the wire (`SyncWireCounter`): every byte, and each request's share (kept
    /// for the steps of a few requests only).
    let wire: Int
    let exchanges: [SyncExchange]
  }

  let server: URL
  /// The relay every request goes through, counting the bytes on the wire.
  let wire: SyncWireCounter
  let events: Int
  let changes: Int
  let directory: String
  /// Part of every collection's name, so that runs sharing a PostgreSQL database never meet.
  let runID: String
  let bucket = "cask-bench"
  /// `KintoServer`'s default page and Kinto's default batch limit.
  let pageSize = KintoServer(url: URL(fileURLWithPath: "/"), user: "", password: "").pageSize
  let batchLimit = 25

  var deletions: Int { changes / 10 }

  /// The events changed between the syncs: spread over the collection; every tenth is deleted.
  var changed: [Int] { (0..<changes).map { $0 * events / changes } }

  func round(_ round: Int, endToEnd: Bool) async throws -> [Measured] {
    let mode = endToEnd ? "e2e" : "plain"
    let collection = "events-\(runID)-\(mode)-\(round)"
    let raw = KintoRawClient(root: server, user: KintoLauncher.user, password: KintoLauncher.password)
    let all = BenchEvent.sequence(0..<events, seed: UInt64(round))
    var measured: [Measured] = []

    // Device A holds the events before its first sync: that sync pushes them all.
    let deviceA = try Device(directory + "/\(collection)-a", events: all)
    defer { deviceA.close() }
    let syncA = try deviceA.sync(server: server, bucket: bucket, collection: collection, endToEnd: endToEnd)
    let push = try await synced(.push, syncA, objects: events)
    try check("push", push.value.pushed, events)
    measured.append(push.step)

    let list = try await timed(.rawList, objects: events) {
      var traffic = KintoRawClient.Traffic()
      let listed = try await raw.list(bucket, collection, since: nil, pageSize: pageSize, traffic: &traffic)
      return (listed, traffic)
    }
    try check("raw listing", list.value.records.count, events)

    let copy = collection + "-copy"
    try await raw.create(bucket, copy)
    measured.append(
      try await timed(.rawPush, objects: events) {
        var traffic = KintoRawClient.Traffic()
        try await raw.push(list.value.records, to: bucket, copy, batchLimit: batchLimit, traffic: &traffic)
        return ((), traffic)
      }.step)

    // Device B starts empty: its first sync lists the collection whole.
    let deviceB = try Device(directory + "/\(collection)-b", events: [])
    defer { deviceB.close() }
    let syncB = try deviceB.sync(server: server, bucket: bucket, collection: collection, endToEnd: endToEnd)
    let pull = try await synced(.fullPull, syncB, objects: events)
    try check("full pull", pull.value.pulled, events)
    measured.append(pull.step)
    if endToEnd {
      // What a first sync in end-to-end mode pays before its first request: the key derivation.
      measured.append(
        try await timed(.keyDerivation, objects: 0) {
          let key = try RNCryptor.scrypt(
            password: SecureBytes(utf8: SyncCommand.passphrase), salt: RNCryptor.randomSalt(count: 16),
            parameters: .interactive, count: 96)
          return (key, KintoRawClient.Traffic())
        }.step)
    }
    measured.append(list.step)

    // A changes a few events (a tenth deleted) and syncs; B pulls those changes.
    try deviceA.change(changed, of: all)
    let incrementalPush = try await synced(.incrementalPush, syncA, objects: changes)
    try check("incremental push", incrementalPush.value.pushed, changes)
    measured.append(incrementalPush.step)
    let incrementalPull = try await synced(.incrementalPull, syncB, objects: changes)
    try check("incremental pull", incrementalPull.value.pulled + incrementalPull.value.deleted, changes)
    try check("incremental pull's deletions", incrementalPull.value.deleted, deletions)
    measured.append(incrementalPull.step)
    let rawSince = try await timed(.rawSince, objects: changes) {
      var traffic = KintoRawClient.Traffic()
      let listed = try await raw.list(bucket, collection, since: list.value.etag, pageSize: pageSize, traffic: &traffic)
      return (listed, traffic)
    }
    try check("raw listing since", rawSince.value.records.count, changes)
    measured.append(rawSince.step)

    let unchanged = try await synced(.unchanged, syncB, objects: 0)
    try check("unchanged sync", unchanged.value.pulled + unchanged.value.deleted + unchanged.value.pushed, 0)
    measured.append(unchanged.step)
    try check("device B's events", deviceB.count, events - deletions)
    return measured
  }

  private func check(_ step: String, _ actual: Int, _ expected: Int) throws {
    guard actual == expected else { throw BenchError("sync: \(step) moved \(actual) events, not \(expected)") }
  }

  /// One `CaskSync.sync()`, timed as `phase`; its requests and bytes are the ones its report counts.
  private func synced(_ phase: SyncCommand.Phase, _ sync: CaskSync<BenchEvent>, objects: Int) async throws -> (
    value: SyncReport<BenchEvent>, step: Measured
  ) {
    try await timed(phase, objects: objects) {
      let report = try await sync.sync()
      return (report, KintoRawClient.Traffic(requests: report.requests, bytes: Int(report.bytes)))
    }
  }

  /// Runs one step and times it; `body` returns its result and the requests and body bytes it
  /// counted. The relay's counts start afresh before it and are taken after it, so that they
  /// are the step's alone.
  private func timed<R>(
    _ phase: SyncCommand.Phase, objects: Int, _ body: () async throws -> (R, KintoRawClient.Traffic)
  ) async throws -> (value: R, step: Measured) {
    _ = wire.take()
    let start = ProcessFigures.now()
    let (value, traffic) = try await body()
    let seconds = ProcessFigures.seconds(since: start)
    let counted = wire.take()
    // The split per request must account for every byte the relay passed on, or the table of
    // requests would show less than was sent.
    let split = counted.exchanges.map(\.total).reduce(0, +)
    guard split == counted.bytes else {
      throw BenchError("sync: the relay split \(split) of the \(counted.bytes) bytes it passed into requests")
    }
    let detailed: Set<SyncCommand.Phase> = [.incrementalPush, .incrementalPull, .rawSince, .unchanged]
    let step = Measured(
      phase: phase, objects: objects, seconds: seconds, traffic: traffic, wire: counted.bytes,
      exchanges: detailed.contains(phase) ? counted.exchanges : [])
    return (value, step)
  }
}

/// A device of the sync benchmark: a store of events on disk.
private final class Device: Sendable {
  let store: CaskStore
  let events: CaskCollection<BenchEvent>

  /// Opens a new store at `path` holding `events`.
  init(_ path: String, events initial: [BenchEvent]) throws {
    store = try CaskStore(path: path, password: "bench", options: .init(durability: .never))
    events = store.collection(BenchEvent.self, named: "events")
    var start = 0
    while start < initial.count {
      let end = Swift.min(initial.count, start + 1_000)
      try events.save(contentsOf: initial[start..<end])
      start = end
    }
  }

  /// The benchmark's Kinto: one device writes at a time, so records are dated in commit order
  /// on either backend and a sync passes over its own pushes.
  static func kinto(_ url: URL) -> KintoServer {
    var server = KintoServer(url: url, user: KintoLauncher.user, password: KintoLauncher.password)
    server.datesInCommitOrder = true
    return server
  }

  func sync(server: URL, bucket: String, collection: String, endToEnd: Bool) throws -> CaskSync<BenchEvent> {
    try CaskSync(
      events, server: Self.kinto(server),
      bucket: bucket, collection: collection, endToEndPassphrase: endToEnd ? SyncCommand.passphrase : nil)
  }

  /// Changes the events at `indices` of `all`: every tenth deleted, the others moved to another venue.
  func change(_ indices: [Int], of all: [BenchEvent]) throws {
    var moved: [BenchEvent] = []
    for (position, index) in indices.enumerated() {
      if position % 10 == 0 {
        guard try events.delete(id: all[index].id) else { throw BenchError("sync: an event to delete is missing") }
      } else {
        var event = all[index]
        event.venue += " (moved)"
        moved.append(event)
      }
    }
    try events.save(contentsOf: moved)
  }

  var count: Int { events.count }

  func close() { try? store.close() }
}
