import CaskEngine
import CaskTestSupport
import CipherCask
import Foundation

/// `cask-crash-writer --collection`: the victim of Tests/CipherCaskTests/IndexKillRecoveryTests.swift.
///
/// Opens a store with `.always` durability and performs the `CollectionCrashWorkload` stream of
/// `(seed, run)` through a collection with declared indexes (one of them unique), printing
/// `CrashWriterLine.acknowledged(i)` after operation i returned, until it is killed. A batch of
/// duplicate e-mails must be refused with `CollectionError.uniqueViolation`; anything else
/// thrown ends the writer with status 1, which the test reports.
///
/// Usage: cask-crash-writer --collection <store path> <password> <seed> <run> <segment size limit>
enum CollectionWriter {
  /// The collection's indexes. The test declares the same list: a different one would be a
  /// changed definition, rebuilt at open.
  static let indexes: [CaskIndex<CrashItem>] = [
    .index("owner", \.owner), .index("rank", \.rank), .index("tag", each: \.tags), .unique("email", \.email),
  ]

  static func run(_ arguments: [String]) -> Never {
    guard arguments.count == 5, let seed = UInt64(arguments[2]), let run = Int(arguments[3]),
      let segmentLimit = UInt64(arguments[4])
    else {
      fail("usage: cask-crash-writer --collection <store path> <password> <seed> <run> <segment size limit>")
    }
    do {
      let options = CaskStore.Options(
        durability: .always, segmentSizeLimit: segmentLimit,
        autoCompaction: CaskStore.AutoCompaction(deadRatio: 0.3, minimumDeadBytes: 8 << 10))
      let store = try CaskStore(path: arguments[0], password: arguments[1], options: options)
      let items = store.collection(CrashItem.self, named: CollectionCrashWorkload.collection, indexes: indexes)
      emit(CrashWriterLine.opened)
      var workload = CollectionCrashWorkload(seed: seed, run: run)
      while workload.index < 100_000 {
        let index = workload.index
        try perform(workload.next(), on: items, in: store)
        emit(CrashWriterLine.acknowledged(index))
      }
      try store.close()
    } catch {
      fail("\(error)")
    }
    exit(0)
  }

  static func perform(
    _ operation: CollectionCrashWorkload.Operation, on items: CaskCollection<CrashItem>, in store: CaskStore
  ) throws {
    switch operation {
    case .save(let item):
      try items.save(item)
    case .update(let id, let owner, let rank, let tags):
      _ = try items.update(id: id) { item in
        item.owner = owner
        item.rank = rank
        item.tags = tags
      }
    case .delete(let id):
      _ = try items.delete(id: id)
    case .saveAll(let objects):
      try items.save(contentsOf: objects)
    case .batch(let steps):
      try store.batch { batch in
        for step in steps {
          switch step {
          case .save(let item): try batch.save(item, in: items)
          case .delete(let id): try batch.delete(id: id, from: items)
          }
        }
      }
    case .duplicateEmails(let objects):
      do {
        try items.save(contentsOf: objects)
        fail("a batch giving two objects one e-mail was accepted")
      } catch CollectionError.uniqueViolation(let collection, let index)
        where collection == CollectionCrashWorkload.collection && index == "email"
      {
        // Refused, as it must be: nothing written.
      }
    case .compact:
      try store.compact()
    }
  }
}
