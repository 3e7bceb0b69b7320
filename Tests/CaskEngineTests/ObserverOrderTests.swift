import CaskTestSupport
import Foundation
import Testing

@testable import CaskEngine

/// Observers are called in a set order: those registered with `observeChangesFirst` (state
/// derived from commits, such as index entries in memory) before all others, then in the order
/// of registration. A query's `observe()` re-runs on another thread when told of a commit; if
/// it were told before the index entries took the commit in, it could read the old entries,
/// show nothing new, and wait for a commit that never comes.
@Suite("Change observers are called in a set order")
struct ObserverOrderTests {
  @Test("a first observer runs before all others; the others in the order they were registered; closing too")
  func firstThenRegistrationOrder() throws {
    try withStore(options: CaskStore.Options(durability: .never), label: "observer-order") { store, _ throws in
      let calls = Locked<[String]>([])
      var observations: [CaskObservation] = []
      // Twenty ordinary observers, then one that keeps derived state: any other order than
      // the set one (a dictionary's, say) shows in one commit.
      for number in 0..<20 {
        observations.append(
          store.observeChanges { _ in
            calls.withLock { $0.append("o\(number)") }
          } onClose: {
            calls.withLock { $0.append("close o\(number)") }
          })
      }
      observations.append(
        store.observeChangesFirst { _ in
          calls.withLock { $0.append("first") }
        } onClose: {
          calls.withLock { $0.append("close first") }
        })
      try store.put(Data("1".utf8), forKey: "a")
      let ordinary = (0..<20).map { "o\($0)" }
      #expect(calls.withLock { $0 } == ["first"] + ordinary)
      calls.withLock { $0.removeAll() }
      try store.close()
      #expect(calls.withLock { $0 } == ["close first"] + ordinary.map { "close \($0)" })
      observations.removeAll()
    }
  }

  @Test(
    "a cancelled observer is no longer called; the others keep their order, and a later one joins the end of its kind")
  func cancelKeepsTheOrder() throws {
    try withStore(options: CaskStore.Options(durability: .never), label: "observer-cancel") { store, _ throws in
      let calls = Locked<[String]>([])
      func observe(_ name: String, first: Bool = false) -> CaskObservation {
        let record: @Sendable ([CaskChange]) -> Void = { _ in calls.withLock { $0.append(name) } }
        return first ? store.observeChangesFirst(record) : store.observeChanges(record)
      }
      var observations = [observe("o1"), observe("f1", first: true), observe("o2"), observe("o3")]
      observations.append(observe("f2", first: true))
      try store.put(Data("1".utf8), forKey: "a")
      #expect(calls.withLock { $0 } == ["f1", "f2", "o1", "o2", "o3"])
      observations[2].cancel()
      observations[1].cancel()
      observations.append(observe("o4"))
      observations.append(observe("f3", first: true))
      calls.withLock { $0.removeAll() }
      try store.put(Data("2".utf8), forKey: "a")
      #expect(calls.withLock { $0 } == ["f2", "f3", "o1", "o3", "o4"])
      observations.removeAll()
      calls.withLock { $0.removeAll() }
      try store.put(Data("3".utf8), forKey: "a")
      #expect(calls.withLock { $0 }.isEmpty)
    }
  }
}
