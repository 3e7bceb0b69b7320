import CaskTestSupport
import Foundation
import Testing

@testable import CaskEngine

/// An observer must learn that its store closed (a change stream built on it would otherwise
/// wait forever), and only after it has seen every commit made before the close.
@Suite("Observers are told once when the store closes, after its last commit")
struct ObserverCloseTests {
  @Test("onClose runs once, after the handler saw every commit; an observer added later is closed at once")
  func onCloseAfterLastCommit() throws {
    try withStore(options: CaskStore.Options(durability: .never), label: "observer-close") { store, _ throws in
      let events = Locked<[String]>([])
      let observation = store.observeChanges { changes in
        events.withLock { $0.append(contentsOf: changes.map(\.key)) }
      } onClose: {
        events.withLock { $0.append("closed") }
      }
      try store.put(Data("1".utf8), forKey: "a")
      try store.put(Data("2".utf8), forKey: "b")
      try store.close()
      try store.close()
      observation.cancel()
      #expect(events.withLock { $0 } == ["a", "b", "closed"])

      let late = Locked(0)
      let lateObservation = store.observeChanges { _ in
      } onClose: {
        late.withLock { $0 += 1 }
      }
      #expect(late.withLock { $0 } == 1)
      lateObservation.cancel()
    }
  }

  @Test("an observer cancelled before the close is not told")
  func cancelledObserverIsNotTold() throws {
    try withStore(options: CaskStore.Options(durability: .never), label: "observer-cancel") { store, _ throws in
      let told = Locked(false)
      let observation = store.observeChanges { _ in
      } onClose: {
        told.withLock { $0 = true }
      }
      observation.cancel()
      try store.close()
      #expect(told.withLock { $0 } == false)
    }
  }
}
