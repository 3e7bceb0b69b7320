import CaskTestSupport
import Foundation
import RNCryptorCodec
import Testing

@testable import CaskEngine

/// A transaction body and a change observer run with the writer held (Docs/ARCHITECTURE.md,
/// rule 8). Calling back into an operation that takes the writer used to wait for the lock
/// the thread itself held, forever; it throws `CaskError.reentrantCall` now, does nothing, and
/// leaves the store as usable as before.
@Suite("A transaction or observer that calls back into the store's writer gets an error, not a deadlock")
struct ReentrantCallTests {
  /// Every operation that needs the writer, each run once from inside user code.
  private static let operations: [(String, @Sendable (CaskStore) throws -> Void)] = [
    ("put", { try $0.put(Data("inner".utf8), forKey: "inner") }),
    ("delete", { try $0.delete("outer-0") }),
    ("batch", { store in try store.batch { try $0.put(Data("inner".utf8), forKey: "inner") } }),
    ("transaction", { store in try store.transaction { try $0.put(Data("inner".utf8), forKey: "inner") } }),
    ("sync", { try $0.sync() }),
    ("compact", { try $0.compact() }),
    ("verify", { _ = try $0.verify() }),
    ("changePassword", { try $0.changePassword(to: "other") }),
    ("changeKeys", { try $0.changeKeys(to: try RNCryptor.Keys.random()) }),
    ("backup", { _ = try $0.backup(to: "/nonexistent/backup-from-user-code") }),
    ("rekeyedCopy", { _ = try $0.rekeyedCopy(to: "/nonexistent/rekey-from-user-code", password: "x") }),
    ("close", { try $0.close() }),
  ]

  private static func expectRefused(
    _ name: String, _ operation: () throws -> Void, sourceLocation: SourceLocation = #_sourceLocation
  ) {
    do {
      try operation()
      Issue.record("\(name) from inside user code did not throw", sourceLocation: sourceLocation)
    } catch CaskError.reentrantCall {
    } catch {
      Issue.record("\(name) threw \(error), not reentrantCall", sourceLocation: sourceLocation)
    }
  }

  @Test(
    "from a transaction body, every writing operation throws; reads work; the transaction commits",
    arguments: [false, true])
  func insideTransaction(durable: Bool) throws {
    try withStore(options: CaskStore.Options(durability: durable ? .always : .never), label: "reentrant-transaction") {
      store, path in
      try store.put(Data("0".utf8), forKey: "outer-0")
      for (name, operation) in Self.operations {
        let read = try store.transaction { transaction -> Data? in
          Self.expectRefused(name) { try operation(store) }
          try transaction.put(Data(name.utf8), forKey: "after-\(name)")
          return try store.get("outer-0")
        }
        #expect(read == Data("0".utf8), "a read inside the transaction (\(name))")
        #expect(try store.get("after-\(name)") == Data(name.utf8), "the transaction committed (\(name))")
      }
      // Nothing the refused calls asked for happened.
      #expect(try store.get("inner") == nil)
      #expect(try store.get("outer-0") == Data("0".utf8))
      try store.put(Data("1".utf8), forKey: "outer-1")
      try store.close()
      let reopened = try CaskStore(path: path, password: "pw")
      #expect(try reopened.get("outer-1") == Data("1".utf8))
      #expect(try reopened.get("after-close") == Data("close".utf8))
      try reopened.close()
    }
  }

  @Test("from a change observer, every writing operation throws; the commit that called it stands")
  func insideObserver() throws {
    try withStore(options: CaskStore.Options(durability: .never), label: "reentrant-observer") { store, _ throws in
      try store.put(Data("0".utf8), forKey: "outer-0")
      let outcomes = Locked<[String: String]>([:])
      let current = Locked<String?>(nil)
      let observation = store.observeChanges { _ in
        guard let name = current.withLock({ $0 }), let operation = Self.operations.first(where: { $0.0 == name })?.1
        else { return }
        var outcome = "returned"
        do {
          try operation(store)
        } catch CaskError.reentrantCall {
          outcome = "refused"
        } catch {
          outcome = "\(error)"
        }
        // A read from the observer sees the commit it is told about.
        if (try? store.get("trigger-\(name)")) != Data(name.utf8) { outcome += ", commit not visible" }
        outcomes.withLock { $0[name] = outcome }
      }
      for (name, _) in Self.operations {
        current.withLock { $0 = name }
        try store.put(Data(name.utf8), forKey: "trigger-\(name)")
      }
      current.withLock { $0 = nil }
      observation.cancel()
      let expected = Dictionary(uniqueKeysWithValues: Self.operations.map { ($0.0, "refused") })
      #expect(outcomes.withLock { $0 } == expected)
      #expect(try store.get("inner") == nil)
      try store.put(Data("1".utf8), forKey: "outer-1")
      #expect(try store.get("outer-1") == Data("1".utf8))
      try store.close()
    }
  }

  @Test("another thread's write during a transaction waits for it instead of being refused")
  func otherThreadWaits() throws {
    try withStore(options: CaskStore.Options(durability: .never), label: "reentrant-other-thread") { store, _ throws in
      let failure = Locked<String?>(nil)
      let done = DispatchSemaphore(value: 0)
      try store.transaction { transaction in
        Thread {
          do {
            try store.put(Data("other".utf8), forKey: "other")
          } catch {
            failure.withLock { $0 = "\(error)" }
          }
          done.signal()
        }.start()
        try transaction.put(Data("mine".utf8), forKey: "mine")
      }
      done.wait()
      #expect(failure.withLock { $0 } == nil)
      #expect(try store.get("other") == Data("other".utf8))
      #expect(try store.get("mine") == Data("mine".utf8))
      try store.close()
    }
  }
}
