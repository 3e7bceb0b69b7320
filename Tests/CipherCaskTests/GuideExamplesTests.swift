import CaskTestSupport
import CipherCask
import Foundation
import Testing

// The code samples of Docs/GUIDE.md and of README.md's "Quick start: collections", compiled
// and run here. `SampleDriftTests` checks that every sample in those documents still appears,
// line for line, in this target, so a sample cannot drift from code that compiles.

// MARK: README: quick start

struct User: Codable, Identifiable, Sendable {
  var id: String
  var name: String
  var city: String
}

func quickStart(path: String) throws -> (User?, [User]) {
  let store = try CaskStore(path: path, password: "correct horse")
  let users = store.collection(User.self)
  try users.save(User(id: "u1", name: "Ann", city: "Amsterdam"))
  let ann = try users.get(id: "u1")
  let locals = try users.filter { $0.city == "Amsterdam" }
  return (ann, locals)
}

// MARK: Guide: the worked example

/// The Core Data events example's JSON: snake_case keys (`fb_url`, `ticket_url`) and ISO 8601 dates.
func importEvents(from file: URL, into events: CaskCollection<Event>) throws -> CaskCollection<Event>.ImportResult {
  let decoder = JSONDecoder()
  decoder.keyDecodingStrategy = .convertFromSnakeCase
  decoder.dateDecodingStrategy = .iso8601
  return try events.importJSON(contentsOf: file, decoder: decoder)
}

/// Copies the events to a JSON Lines file and back into another store's collection.
func copyEvents(_ events: CaskCollection<Event>, to copy: CaskCollection<Event>, through file: URL) throws -> Int {
  let encoder = JSONEncoder()
  encoder.dateEncodingStrategy = .iso8601
  let decoder = JSONDecoder()
  decoder.dateDecodingStrategy = .iso8601
  try events.exportJSON(to: file, encoder: encoder)
  return try copy.importJSON(contentsOf: file, decoder: decoder).inserted
}

func eventsByDate(in city: String, from events: CaskCollection<Event>) throws -> [Event] {
  try events.fetch(where: { $0.city == city }, sortedBy: { $0.date < $1.date })
}

func moveVenue(from old: String, to new: String, in events: CaskCollection<Event>) throws -> Int {
  try events.updateAll(where: { $0.venue == old }, { $0.venue = new })
}

func deletePastEvents(from events: CaskCollection<Event>, now: Date = Date()) throws -> Int {
  try events.deleteAll { $0.date < now }
}

/// Shows every change to `events` until the returned task is cancelled.
func follow(
  _ events: CaskCollection<Event>, show: @escaping @Sendable (CollectionChange<String>) -> Void
) -> Task<Void, Never> {
  Task {
    for await change in events.changes() {
      show(change)
    }
  }
}

/// The same, sure to see every write made after it returns.
func followFromNow(
  _ events: CaskCollection<Event>, show: @escaping @Sendable (CollectionChange<String>) -> Void
) -> Task<Void, Never> {
  let changes = events.changes()  // subscribed here, before the task starts
  return Task {
    for await change in changes {
      show(change)
    }
  }
}

// MARK: Guide: batches across collections

struct Ticket: Codable, Identifiable, Sendable {
  var id: UUID
  var eventId: String
  var holder: String
}

/// Saves an event with its tickets: all of them or, after an error or a crash, none.
func publish(_ event: Event, ticketsFor holders: [String], in store: CaskStore) throws {
  let tickets = store.collection(Ticket.self)
  try store.batch { batch in
    try batch.save(event, in: store.collection(Event.self))
    for holder in holders {
      try batch.save(Ticket(id: UUID(), eventId: event.id, holder: holder), in: tickets)
    }
  }
}

/// Moves past events to the collection "archive", both sides in one batch.
func archivePastEvents(in store: CaskStore, now: Date = Date()) throws -> Int {
  let events = store.collection(Event.self)
  let archive = store.collection(Event.self, named: "archive")
  let past = try events.filter { $0.date < now }
  try store.batch { batch in
    for event in past {
      try batch.save(event, in: archive)
      try batch.delete(id: event.id, from: events)
    }
  }
  return past.count
}

// MARK: Guide: many tasks

/// Adds every person to an event's attendees from one task each: no registration is lost.
func register(_ people: [String], for eventId: String, in events: CaskCollection<Event>) async throws {
  try await withThrowingTaskGroup(of: Void.self) { group in
    for person in people {
      group.addTask {
        try await events.update(id: eventId) { $0.attendees.append(person) }
      }
    }
    try await group.waitForAll()
  }
}

// MARK: Guide: changing the model

struct Member: Codable, Identifiable, Sendable {
  var id: String
  var name: String
  var city: String
}

struct MemberWithPhone: Codable, Identifiable, Sendable {
  var id: String
  var name: String
  var city: String
  var phone: String?  // added in version 2: objects saved before read it as nil
}

struct MemberRenamedWithKeys: Codable, Identifiable, Sendable {
  var id: String
  var fullName: String  // was `name`, and is still stored as "name"
  var city: String

  enum CodingKeys: String, CodingKey {
    case id, city
    case fullName = "name"
  }
}

struct MemberRenamedWithInit: Codable, Identifiable, Sendable {
  var id: String
  var fullName: String  // stored as "fullName" from now on; older objects have "name"
  var city: String

  enum CodingKeys: String, CodingKey {
    case id, fullName, city
    case name  // read from old objects, never written
  }

  init(id: String, fullName: String, city: String) {
    self.id = id
    self.fullName = fullName
    self.city = city
  }

  init(from decoder: any Decoder) throws {
    let container = try decoder.container(keyedBy: CodingKeys.self)
    id = try container.decode(String.self, forKey: .id)
    fullName =
      try container.decodeIfPresent(String.self, forKey: .fullName)
      ?? container.decode(String.self, forKey: .name)
    city = try container.decode(String.self, forKey: .city)
  }

  func encode(to encoder: any Encoder) throws {
    var container = encoder.container(keyedBy: CodingKeys.self)
    try container.encode(id, forKey: .id)
    try container.encode(fullName, forKey: .fullName)
    try container.encode(city, forKey: .city)
  }
}

struct MemberWithoutCity: Codable, Identifiable, Sendable {
  var id: String
  var name: String  // `city` removed: old objects still have it, and it is ignored
}

struct MemberWithScore: Codable, Identifiable, Sendable {
  var id: String
  var name: String
  var city: String
  var score: Int  // added as non-optional: objects saved before do not decode
}

/// What still decodes, and the ids of what does not.
func readableMembers(in store: CaskStore) throws -> (members: [MemberWithScore], unreadable: [String]) {
  let result = try store.collection(MemberWithScore.self, named: "members").all(onDecodingFailure: .skip)
  let unreadable = result.failures.compactMap { failure -> String? in
    guard case .decoding(_, let id, _) = failure else { return nil }
    return id
  }
  return (result.objects, unreadable)
}

/// Rewrites the members saved before `score` existed, with a score of 0, in one transaction:
/// no other writer can save a member between the read and the rewrite.
func migrateScores(in store: CaskStore) throws -> Int {
  let old = store.collection(Member.self, named: "members")
  let new = store.collection(MemberWithScore.self, named: "members")
  return try store.transaction { transaction in
    var migrated = 0
    for id in try readableMembers(in: store).unreadable {
      guard let member = try transaction.get(id: id, from: old) else { continue }
      try transaction.save(MemberWithScore(id: member.id, name: member.name, city: member.city, score: 0), in: new)
      migrated += 1
    }
    return migrated
  }
}

// MARK: The tests that run them

// MARK: Guide: backups

/// Copies the store into `folder` as `<today>.cask`, then keeps only the newest `keep` copies.
func dailyBackup(of store: CaskStore, in folder: URL, today: String, keep: Int = 7) throws -> CaskBackupReport {
  let report = try store.backup(to: folder.appendingPathComponent("\(today).cask").path)
  let files = FileManager.default
  let copies = try files.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".cask") }
  for name in copies.sorted().dropLast(keep) {
    try files.removeItem(at: folder.appendingPathComponent(name))
  }
  return report
}

/// A backup the caller can stop (when the user leaves the screen, say) with `cancel()`.
func startBackup(of store: CaskStore, to path: String) -> Task<CaskBackupReport, any Error> {
  Task { try await store.backup(to: path) }
}

@Suite("The guide's and README's samples run as documented")
struct GuideExamplesTests {
  private static let now = ISO8601DateFormatter().date(from: "2026-01-01T00:00:00Z")!

  @Test("README quick start: open, collection, save, get, filter")
  func readmeQuickStart() throws {
    try withTemporaryDirectory("readme") { directory throws in
      let (ann, locals) = try quickStart(path: directory.file("app.cask"))
      #expect(ann?.name == "Ann")
      #expect(locals.map(\.id) == ["u1"])
    }
  }

  @Test("the worked example: import a file, filter by city, move a venue, delete past events")
  func workedExample() throws {
    try withTemporaryDirectory("guide") { directory throws in
      let file = URL(fileURLWithPath: directory.file("events.json"))
      try sampleEventsJSON.write(to: file)
      let path = directory.file("events.cask")
      let store = try CaskStore(path: path, password: "correct horse")
      defer { try? store.close() }
      let events = store.collection(Event.self)
      #expect(try importEvents(from: file, into: events) == .init(inserted: 3, replaced: 0))
      #expect(try eventsByDate(in: "Amsterdam", from: events).map(\.id) == ["e3", "e1"])
      #expect(try moveVenue(from: "Hall A", to: "Main Hall", in: events) == 1)
      #expect(try events.get(id: "e1")?.venue == "Main Hall")
      #expect(try deletePastEvents(from: events, now: Self.now) == 1)
      #expect(try events.ids() == ["e1", "e2"])
      let copy = store.collection(Event.self, named: "copy")
      let exported = URL(fileURLWithPath: (path as NSString).deletingLastPathComponent + "/events-copy.jsonl")
      #expect(try copyEvents(events, to: copy, through: exported) == 2)
      #expect(try copy.all().sorted { $0.id < $1.id } == events.all().sorted { $0.id < $1.id })
    }
  }

  @Test("follow and followFromNow see the commits, and stop when cancelled")
  func followingChanges() async throws {
    try await withStore("guide-follow") { store in
      let events = store.collection(Event.self)
      let seenLater = SeenChanges()
      let seenFromNow = SeenChanges()
      let fromNow = followFromNow(events) { seenFromNow.append($0) }
      try await events.save(sampleEvents()[0])
      #expect(await seenFromNow.waitFor { $0.inserted == ["a1"] })
      let later = follow(events) { seenLater.append($0) }
      // `follow` subscribes when its task starts: write until it has seen something.
      var marker = 0
      while seenLater.changes.isEmpty && marker < 5_000 {
        marker += 1
        let text = "\(marker)"
        try await events.update(id: "a1") { $0.attendees = [text] }
        try await Task.sleep(nanoseconds: 1_000_000)
      }
      try await events.delete(id: "a1")
      #expect(await seenLater.waitFor { $0.deleted == ["a1"] })
      #expect(await seenFromNow.waitFor { $0.deleted == ["a1"] })
      #expect(seenFromNow.changes.first?.inserted == ["a1"])
      later.cancel()
      fromNow.cancel()
      await later.value
      await fromNow.value
    }
  }

  /// The changes a `show` closure was given.
  private final class SeenChanges: Sendable {
    private let seen = Locked<[CollectionChange<String>]>([])

    var changes: [CollectionChange<String>] { seen.withLock { $0 } }

    func append(_ change: CollectionChange<String>) { seen.withLock { $0.append(change) } }

    /// Whether a change matching `matches` arrived within ten seconds.
    func waitFor(_ matches: (CollectionChange<String>) -> Bool) async -> Bool {
      await waitUntil(seconds: 10) { changes.contains(where: matches) }
      return changes.contains(where: matches)
    }
  }

  @Test("publish and archivePastEvents write across collections in one batch")
  func batchesAcrossCollections() throws {
    try withStore("guide-batch") { store throws in
      let log = CommitLog(store)
      try publish(sampleEvents()[3], ticketsFor: ["ann", "bob"], in: store)
      #expect(log.commits.count == 1)
      #expect(store.collection(Ticket.self).count == 2)
      #expect(try store.collection(Ticket.self).all().allSatisfy { $0.eventId == "a4" })
      try store.collection(Event.self).save(contentsOf: sampleEvents())
      log.reset()
      #expect(try archivePastEvents(in: store, now: Self.now) == 1)
      #expect(log.commits.count == 1)
      #expect(try store.collection(Event.self, named: "archive").ids() == ["a1"])
      #expect(try store.collection(Event.self).ids() == ["a2", "a3", "a4"])
    }
  }

  @Test("register from 16 tasks loses no attendee")
  func registerFromManyTasks() async throws {
    try await withStore("guide-register") { store in
      let events = store.collection(Event.self)
      try await events.save(sampleEvents()[0])
      let people = (0..<16).map { "person \($0)" }
      try await register(people, for: "a1", in: events)
      let attendees = try await events.get(id: "a1")?.attendees ?? []
      #expect(attendees.count == 17)
      #expect(Set(attendees) == Set(people + ["ann"]))
    }
  }

  @Test("the migration samples behave as the guide says")
  func migrationSamples() throws {
    try withStore("guide-migration") { store throws in
      let members = store.collection(Member.self, named: "members")
      try members.save(contentsOf: [
        Member(id: "m1", name: "Ann", city: "Amsterdam"), Member(id: "m2", name: "Bob", city: "Utrecht"),
      ])
      #expect(try store.collection(MemberWithPhone.self, named: "members").get(id: "m1")?.phone == nil)
      #expect(try store.collection(MemberRenamedWithKeys.self, named: "members").get(id: "m1")?.fullName == "Ann")
      let renamed = store.collection(MemberRenamedWithInit.self, named: "members")
      #expect(try renamed.get(id: "m2")?.fullName == "Bob")
      try renamed.save(MemberRenamedWithInit(id: "m3", fullName: "Cy", city: "Delft"))
      #expect(try renamed.get(id: "m3")?.fullName == "Cy")
      #expect(throws: CollectionError.self) { try members.get(id: "m3") }  // the old model cannot read it
      try members.delete(id: "m3")
      #expect(try store.collection(MemberWithoutCity.self, named: "members").all().count == 2)
      let before = try readableMembers(in: store)
      #expect(before.members.isEmpty)
      #expect(before.unreadable.sorted() == ["m1", "m2"])
      #expect(try migrateScores(in: store) == 2)
      let after = try readableMembers(in: store)
      #expect(after.unreadable.isEmpty)
      #expect(after.members.map(\.score) == [0, 0])
    }
  }

  @Test("startBackup's task makes a whole copy, or, cancelled, leaves none")
  func cancellableBackup() async throws {
    try await withTemporaryDirectory("guide-cancel") { directory async throws in
      let store = try CaskStore(path: directory.file("app.cask"), password: "pw", options: .init(durability: .never))
      defer { try? store.close() }
      try await store.collection(Event.self).save(contentsOf: sampleEvents())
      let report = try await startBackup(of: store, to: directory.file("whole.cask")).value
      #expect(report.segments >= 1)
      let copy = try CaskStore(path: directory.file("whole.cask"), password: "pw")
      #expect(copy.collection(Event.self).count == sampleEvents().count)
      try copy.close()
      let stopped = startBackup(of: store, to: directory.file("stopped.cask"))
      stopped.cancel()
      switch await stopped.result {
      case .success:
        #expect(FileManager.default.fileExists(atPath: directory.file("stopped.cask/CASK")), "returned: a whole copy")
      case .failure(let error):
        #expect(error is CancellationError, "\(error)")
        #expect(!FileManager.default.fileExists(atPath: directory.file("stopped.cask")), "cancelled: nothing left")
      }
    }
  }

  @Test("dailyBackup writes copies that open with the store's password and keeps the newest ones")
  func dailyBackups() throws {
    try withTemporaryDirectory("guide-backup") { directory throws in
      let store = try CaskStore(path: directory.file("app.cask"), password: "pw", options: .init(durability: .never))
      defer { try? store.close() }
      let events = store.collection(Event.self)
      let folder = URL(fileURLWithPath: directory.file("backups"))
      for (day, event) in sampleEvents().enumerated() {
        try events.save(event)
        let report = try dailyBackup(of: store, in: folder, today: "2026-12-0\(day + 1)", keep: 2)
        #expect(report.segments >= 1 && report.bytes > 0)
      }
      let kept = try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
      #expect(kept == ["2026-12-03.cask", "2026-12-04.cask"])
      let copy = try CaskStore(path: folder.appendingPathComponent("2026-12-03.cask").path, password: "pw")
      defer { try? copy.close() }
      #expect(try copy.collection(Event.self).ids() == ["a1", "a2", "a3"], "the copy of day 3 holds three events")
    }
  }
}
