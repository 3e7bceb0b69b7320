import CaskTestSupport
import CipherCask
import Foundation
import Testing

/// The `async` forms follow Swift cancellation: a cancelled call throws `CancellationError` and
/// has changed nothing, a scan with a predicate stops at the next object, and a write that has
/// got past its last check commits and returns normally. Prevents cancelled tasks running
/// their whole batch (async forms that ignored cancellation).
@Suite("Async forms follow cancellation")
struct AsyncCancellationTests {
  @Test("a task cancelled before the call: saves, deletes and reads throw CancellationError and change nothing")
  func cancelledBeforeTheCall() async throws {
    try await withStore("cancel-before") { store in
      let events = store.collection(Event.self)
      let sample = sampleEvents()
      try await events.save(sample[0])
      let outcomes = await Task {
        withUnsafeCurrentTask { $0?.cancel() }
        return [
          await Self.outcome { try await events.save(sample[1]) },
          await Self.outcome { try await events.save(contentsOf: Array(sample[2...])) },
          await Self.outcome { try await events.delete(id: "a1") },
          await Self.outcome { _ = try await events.removeAll() },
          await Self.outcome { _ = try await events.upsert(Array(sample[1...])) },
          await Self.outcome { _ = try await events.all() },
          await Self.outcome { _ = try await events.get(id: "a1") },
        ]
      }.value
      #expect(outcomes == Array(repeating: .cancelled, count: 7))
      #expect(try await events.ids() == ["a1"], "nothing was saved or deleted")
    }
  }

  @Test("cancelled during updateAll, deleteAll, filter, fetch or first: the scan stops and nothing is applied")
  func cancelledDuringAScan() async throws {
    try await withStore("cancel-during") { store in
      let events = store.collection(Event.self)
      let sample = sampleEvents()
      try await events.save(contentsOf: sample)
      // Last in id order and in the files: an object that no longer decodes, which a scan
      // stopped at the first object never reaches (filter and fetch read every object before
      // their first check, and failed on it).
      try store.put(Data("{}".utf8), forKey: try events.storageKey(for: "zz"))
      let calls: [@Sendable (@escaping @Sendable (Event) -> Bool) async throws -> Void] = [
        { predicate in _ = try await events.updateAll(where: predicate) { $0.city = "Changed" } },
        { predicate in _ = try await events.deleteAll(where: predicate) },
        { predicate in _ = try await events.filter(predicate) },
        { predicate in _ = try await events.fetch(where: predicate) },
        { predicate in _ = try await events.first { !predicate($0) } },
      ]
      for (index, call) in calls.enumerated() {
        let handle = TaskHandle()
        let task = Task {
          await Self.outcome {
            try await call { _ in
              handle.cancelWhenKnown()
              return true
            }
          }
        }
        handle.know(task)
        #expect(await task.value == .cancelled, "call \(index)")
        #expect(handle.cancels == 1, "call \(index): the predicate ran once, then the scan stopped")
        let left = try await events.all(onDecodingFailure: .skip)
        #expect(left.objects.sorted { $0.id < $1.id } == sample, "call \(index) changed nothing")
        #expect(left.failures.count == 1, "call \(index) changed nothing")
      }
    }
  }

  @Test("cancelled after updateAll's last check: the batch commits and reports its count")
  func cancelledAfterTheLastCheck() async throws {
    try await withStore("cancel-after") { store in
      let events = store.collection(Event.self)
      try await events.save(sampleEvents()[0])
      let handle = TaskHandle()
      let task = Task {
        try await events.updateAll(where: { _ in true }) { event in
          handle.cancelWhenKnown()
          event.city = "Changed"
        }
      }
      handle.know(task)
      #expect(try await task.value == 1)
      #expect(try await events.get(id: "a1")?.city == "Changed")
    }
  }

  enum Outcome: Equatable {
    case returned
    case cancelled
    case failed(String)
  }

  static func outcome(_ body: () async throws -> Void) async -> Outcome {
    do {
      try await body()
      return .returned
    } catch is CancellationError {
      return .cancelled
    } catch {
      return .failed("\(error)")
    }
  }

  @Test("the async save(contentsOf:) and upsert take any sequence, and follow cancellation with it")
  func asyncFormsTakeSequences() async throws {
    try await withStore("async-slices") { store in
      let events = store.collection(Event.self)
      let sample = sampleEvents()
      try await events.save(contentsOf: sample[0..<2])
      #expect(try await events.upsert(sample[1...]) == .init(inserted: 2, replaced: 1))
      try await events.removeAll()
      let outcome = await Task {
        withUnsafeCurrentTask { $0?.cancel() }
        do {
          try await events.save(contentsOf: sample[1...])
          return "saved"
        } catch is CancellationError {
          return "cancelled"
        } catch {
          return "\(error)"
        }
      }.value
      #expect(outcome == "cancelled")
      #expect(try await events.ids().isEmpty, "a cancelled save of a slice saved nothing")
    }
  }
}

/// Lets work running on another thread cancel a task that is made after the work's closure:
/// `cancelWhenKnown` waits until `know` has been given the task.
private final class TaskHandle: @unchecked Sendable {
  private let condition = NSCondition()
  private var cancelTask: (@Sendable () -> Void)?
  private var count = 0

  func know<Success, Failure>(_ task: Task<Success, Failure>) {
    condition.withLock {
      cancelTask = { task.cancel() }
      condition.broadcast()
    }
  }

  func cancelWhenKnown() {
    let cancel = condition.withLock {
      while cancelTask == nil { condition.wait() }
      count += 1
      return cancelTask
    }
    cancel?()
  }

  var cancels: Int { condition.withLock { count } }
}
