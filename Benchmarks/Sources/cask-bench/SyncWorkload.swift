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

    init(
      phase: SyncCommand.Phase, objects: Int, seconds: Double, traffic: KintoRawClient.Traffic,
      wire: (bytes: Int, exchanges: [SyncExchange])
    ) {
      self.phase = phase
      self.objects = objects
      self.seconds = seconds
      self.traffic = traffic
      self.wire = wire.bytes
      let detailed: Set<SyncCommand.Phase> = [.incrementalPush, .incrementalPull, .rawSince, .unchanged]
      exchanges = detailed.contains(phase) ? wire.exchanges : []
    }
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
    let push = try await timed { try await syncA.sync() }
    try check("push", push.value.pushed, events)
    measured.append(
      Measured(
        phase: .push, objects: events, seconds: push.seconds, traffic: traffic(push.value),
        wire: push.wire))

    var listing = KintoRawClient.Traffic()
    let list = try await timed {
      try await raw.list(bucket, collection, since: nil, pageSize: pageSize, traffic: &listing)
    }
    try check("raw listing", list.value.records.count, events)

    let copy = collection + "-copy"
    try await raw.create(bucket, copy)
    var copying = KintoRawClient.Traffic()
    let rawPush = try await timed {
      try await raw.push(list.value.records, to: bucket, copy, batchLimit: batchLimit, traffic: &copying)
    }
    measured.append(
      Measured(phase: .rawPush, objects: events, seconds: rawPush.seconds, traffic: copying, wire: rawPush.wire))

    // Device B starts empty: its first sync lists the collection whole.
    let deviceB = try Device(directory + "/\(collection)-b", events: [])
    defer { deviceB.close() }
    let syncB = try deviceB.sync(server: server, bucket: bucket, collection: collection, endToEnd: endToEnd)
    let pull = try await timed { try await syncB.sync() }
    try check("full pull", pull.value.pulled, events)
    measured.append(
      Measured(
        phase: .fullPull, objects: events, seconds: pull.seconds, traffic: traffic(pull.value),
        wire: pull.wire))
    if endToEnd {
      // What a first sync in end-to-end mode pays before its first request: the key derivation.
      let derivation = try await timed {
        try RNCryptor.scrypt(
          password: SecureBytes(utf8: SyncCommand.passphrase), salt: RNCryptor.randomSalt(count: 16),
          parameters: .interactive, count: 96)
      }
      measured.append(
        Measured(
          phase: .keyDerivation, objects: 0, seconds: derivation.seconds, traffic: KintoRawClient.Traffic(),
          wire: derivation.wire))
    }
    measured.append(
      Measured(phase: .rawList, objects: events, seconds: list.seconds, traffic: listing, wire: list.wire))

    // A changes a few events (a tenth deleted) and syncs; B pulls those changes.
    try deviceA.change(changed, of: all)
    let incrementalPush = try await timed { try await syncA.sync() }
    try check("incremental push", incrementalPush.value.pushed, changes)
    measured.append(
      Measured(
        phase: .incrementalPush, objects: changes, seconds: incrementalPush.seconds,
        traffic: traffic(incrementalPush.value), wire: incrementalPush.wire))
    let incrementalPull = try await timed { try await syncB.sync() }
    try check("incremental pull", incrementalPull.value.pulled + incrementalPull.value.deleted, changes)
    try check("incremental pull's deletions", incrementalPull.value.deleted, deletions)
    measured.append(
      Measured(
        phase: .incrementalPull, objects: changes, seconds: incrementalPull.seconds,
        traffic: traffic(incrementalPull.value), wire: incrementalPull.wire))
    var since = KintoRawClient.Traffic()
    let rawSince = try await timed {
      try await raw.list(bucket, collection, since: list.value.etag, pageSize: pageSize, traffic: &since)
    }
    try check("raw listing since", rawSince.value.records.count, changes)
    measured.append(
      Measured(phase: .rawSince, objects: changes, seconds: rawSince.seconds, traffic: since, wire: rawSince.wire))

    let unchanged = try await timed { try await syncB.sync() }
    try check("unchanged sync", unchanged.value.pulled + unchanged.value.deleted + unchanged.value.pushed, 0)
    measured.append(
      Measured(
        phase: .unchanged, objects: 0, seconds: unchanged.seconds, traffic: traffic(unchanged.value),
        wire: unchanged.wire))
    try check("device B's events", deviceB.count, events - deletions)
    return measured
  }

  private func traffic(_ report: SyncReport<BenchEvent>) -> KintoRawClient.Traffic {
    KintoRawClient.Traffic(requests: report.requests, bytes: Int(report.bytes))
  }

  private func check(_ step: String, _ actual: Int, _ expected: Int) throws {
    guard actual == expected else { throw BenchError("sync: \(step) moved \(actual) events, not \(expected)") }
  }

  /// Runs one step and times it; the relay's counts start afresh before it and are taken
  /// after it (`lastWire`), so that they are the step's alone.
  private func timed<R>(_ body: () async throws -> R) async throws -> (
    value: R, seconds: Double, wire: (bytes: Int, exchanges: [SyncExchange])
  ) {
    _ = wire.take()
    let start = Stopwatch.now()
    let value = try await body()
    let seconds = Double(Stopwatch.now() - start) / 1e9
    let counted = wire.take()
    // The split per request must account for every byte the relay passed on, or the table of
    // requests would show less than was sent.
    let split = counted.exchanges.map(\.total).reduce(0, +)
    guard split == counted.bytes else {
      throw BenchError("sync: the relay split \(split) of the \(counted.bytes) bytes it passed into requests")
    }
    return (value, seconds, counted)
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
