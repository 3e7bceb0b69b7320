import Foundation

/// An object of the collection that `cask-crash-writer --collection` writes: indexed by
/// `owner`, `rank`, each of `tags`, and uniquely by `email`.
public struct CrashItem: Codable, Identifiable, Sendable, Equatable {
  public var id: String
  public var owner: String
  public var rank: Int
  public var tags: [String]
  public var email: String
  /// Names the run, operation and step that wrote it (`run.index.step`), for failure messages.
  public var origin: String

  public init(id: String, owner: String, rank: Int, tags: [String], email: String, origin: String) {
    self.id = id
    self.owner = owner
    self.rank = rank
    self.tags = tags
    self.email = email
    self.origin = origin
  }
}

/// The seeded stream of collection writes that `cask-crash-writer --collection` performs and
/// the index crash test replays, as `CrashWorkload` is for the engine.
///
/// The stream does not depend on what the store holds, so that both sides build it from
/// `(seed, run)` alone: an object's e-mail is always its own (`email(of:)`), so no save or
/// batch of the stream collides in the unique index, except `.duplicateEmails`, a batch that
/// gives two objects one e-mail and must always be refused, whatever the store holds.
public struct CollectionCrashWorkload: Sendable {
  /// One step of a `store.batch`.
  public enum BatchStep: Sendable, Equatable {
    case save(CrashItem)
    case delete(id: String)
  }

  /// One call the writer makes.
  public enum Operation: Sendable, Equatable {
    case save(CrashItem)
    /// `update(id:)`, setting these fields when the object exists.
    case update(id: String, owner: String, rank: Int, tags: [String])
    case delete(id: String)
    /// `save(contentsOf:)` of distinct ids.
    case saveAll([CrashItem])
    /// `store.batch` of saves and deletes.
    case batch([BatchStep])
    /// `save(contentsOf:)` of two objects with one e-mail: refused with
    /// `CollectionError.uniqueViolation`, writing nothing.
    case duplicateEmails([CrashItem])
    case compact
  }

  /// The collection's name in the store.
  public static let collection = "items"
  /// Ids are drawn from this many, so updates, replacements and deletes are frequent.
  public static let idCount = 24
  public static let owners = ["ana", "bo", "cy", "di"]
  public static let tagWords = ["red", "green", "blue", "gold", "grey", "pink"]

  public let run: Int
  /// Index of the operation `next()` returns.
  public private(set) var index = 0
  private var random: SeededRandom

  public init(seed: UInt64, run: Int) {
    self.run = run
    var mixer = SeededRandom(seed: seed ^ (UInt64(run + 1) &* 0x9E37_79B9_7F4A_7C15))
    random = SeededRandom(seed: mixer.next())
  }

  public static func email(of id: String) -> String { "\(id)@example.com" }

  /// The next operation of the stream.
  public mutating func next() -> Operation {
    defer { index += 1 }
    let roll = random.next() % 100
    switch roll {
    case 0..<34:
      return .save(item(step: 0))
    case 34..<50:
      return .update(id: randomID(), owner: randomOwner(), rank: randomRank(), tags: randomTags())
    case 50..<64:
      return .delete(id: randomID())
    case 64..<72:
      var items: [String: CrashItem] = [:]
      for step in 1...Int(2 + random.next() % 4) {
        let item = item(step: step)
        items[item.id] = item
      }
      return .saveAll(items.values.sorted { $0.id < $1.id })
    case 72..<92:
      var steps: [BatchStep] = []
      for step in 1...Int(2 + random.next() % 5) {
        steps.append(random.next() % 4 == 0 ? .delete(id: randomID()) : .save(item(step: step)))
      }
      return .batch(steps)
    case 92..<98:
      let first = item(step: 1)
      var second = item(step: 2)
      if second.id == first.id { second.id = first.id == "item-0" ? "item-1" : "item-0" }
      second.email = first.email
      return .duplicateEmails([first, second])
    default:
      return .compact
    }
  }

  /// The collection's objects after `operation`, starting from `model`.
  public static func apply(_ operation: Operation, to model: inout [String: CrashItem]) {
    switch operation {
    case .save(let item):
      model[item.id] = item
    case .update(let id, let owner, let rank, let tags):
      guard var item = model[id] else { return }
      item.owner = owner
      item.rank = rank
      item.tags = tags
      model[id] = item
    case .delete(let id):
      model[id] = nil
    case .saveAll(let items):
      for item in items { model[item.id] = item }
    case .batch(let steps):
      for step in steps {
        switch step {
        case .save(let item): model[item.id] = item
        case .delete(let id): model[id] = nil
        }
      }
    case .duplicateEmails, .compact:
      break
    }
  }

  private mutating func item(step: Int) -> CrashItem {
    let id = randomID()
    return CrashItem(
      id: id, owner: randomOwner(), rank: randomRank(), tags: randomTags(), email: Self.email(of: id),
      origin: "\(run).\(index).\(step)")
  }

  private mutating func randomID() -> String { "item-\(random.next() % UInt64(Self.idCount))" }
  private mutating func randomOwner() -> String { Self.owners[Int(random.next() % UInt64(Self.owners.count))] }
  private mutating func randomRank() -> Int { Int(random.next() % 40) }

  /// 0 to 3 tags, sometimes one twice (an `each` index keeps one entry per distinct value).
  private mutating func randomTags() -> [String] {
    (0..<Int(random.next() % 4)).map { _ in Self.tagWords[Int(random.next() % UInt64(Self.tagWords.count))] }
  }
}
