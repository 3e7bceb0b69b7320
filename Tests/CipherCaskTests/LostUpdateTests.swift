import CaskTestSupport
import CipherCask
import Dispatch
import Foundation
import Testing

/// Many tasks (and threads) writing the same and different ids at once must not lose an
/// update: `update`'s read-modify-write cannot interleave with another writer, so every
/// increment lands, and saves of different ids all survive.
@Suite("Concurrent writers never lose an update")
struct LostUpdateTests {
  @Test("16 tasks incrementing 4 shared counters with async update lose no increment")
  func sharedCountersKeepEveryIncrement() async throws {
    try await withStore("lost-update") { store in
      let counters = store.collection(Counter.self)
      let shared = 4
      let tasks = 16
      let increments = testIterations(40)
      try await counters.save(contentsOf: (0..<shared).map { Counter(id: $0, value: 0) })
      try await withThrowingTaskGroup(of: Void.self) { group in
        for task in 0..<tasks {
          group.addTask {
            for step in 0..<increments {
              let id = (task + step) % shared
              let updated = try await counters.update(id: id) { $0.value += 1 }
              #expect(updated != nil)
            }
          }
        }
        try await group.waitForAll()
      }
      let total = try await counters.all().reduce(0) { $0 + $1.value }
      #expect(total == tasks * increments)
      for id in 0..<shared {
        let expected = (0..<tasks).reduce(0) { sum, task in
          sum + (0..<increments).filter { (task + $0) % shared == id }.count
        }
        #expect(try await counters.get(id: id)?.value == expected)
      }
    }
  }

  @Test("12 tasks saving their own ids while updating shared ones keep every object and increment")
  func ownAndSharedIdsAtOnce() async throws {
    try await withStore("lost-update-mixed") { store in
      let counters = store.collection(Counter.self)
      let tasks = 12
      let perTask = testIterations(25)
      try await counters.save(Counter(id: -1, value: 0))
      try await withThrowingTaskGroup(of: Void.self) { group in
        for task in 0..<tasks {
          group.addTask {
            for step in 0..<perTask {
              try await counters.save(Counter(id: task * 1_000 + step, value: step, label: "task \(task)"))
              try await counters.update(id: -1) { $0.value += 1 }
              if step % 5 == 0 {
                _ = try await counters.all()
              }
            }
          }
        }
        try await group.waitForAll()
      }
      #expect(counters.count == tasks * perTask + 1)
      #expect(try await counters.get(id: -1)?.value == tasks * perTask)
      for task in 0..<tasks {
        let own = try await counters.filter { $0.label == "task \(task)" }
        #expect(own.count == perTask)
      }
    }
  }

  @Test("updateAll batches and single updates running together lose nothing")
  func updateAllAndUpdateTogether() async throws {
    try await withStore("lost-update-all") { store in
      let counters = store.collection(Counter.self)
      let size = 8
      let rounds = testIterations(15)
      try await counters.save(contentsOf: (0..<size).map { Counter(id: $0, value: 0) })
      try await withThrowingTaskGroup(of: Void.self) { group in
        for _ in 0..<4 {
          group.addTask {
            for _ in 0..<rounds { try await counters.updateAll(where: { _ in true }) { $0.value += 1 } }
          }
        }
        for task in 0..<8 {
          group.addTask {
            for _ in 0..<rounds { try await counters.update(id: task % size) { $0.value += 100 } }
          }
        }
        try await group.waitForAll()
      }
      for id in 0..<size {
        #expect(try await counters.get(id: id)?.value == 4 * rounds + 100 * rounds)
      }
    }
  }

  @Test("the synchronous API from 8 threads at once loses no increment")
  func synchronousThreadsKeepEveryIncrement() throws {
    try withStore("lost-update-threads") { store throws in
      let counters = store.collection(Counter.self)
      let increments = testIterations(40)
      try counters.save(Counter(id: 0, value: 0))
      DispatchQueue.concurrentPerform(iterations: 8) { thread in
        for step in 0..<increments {
          do {
            try counters.update(id: 0) { $0.value += 1 }
            try counters.save(Counter(id: 1 + thread * 10_000 + step, value: step))
          } catch {
            Issue.record("thread \(thread): \(error)")
          }
        }
      }
      #expect(try counters.get(id: 0)?.value == 8 * increments)
      #expect(counters.count == 1 + 8 * increments)
    }
  }

  @Test("a save from inside update's closure throws reentrantCall instead of deadlocking; the update stands")
  func saveInsideUpdate() throws {
    try withStore { store throws in
      let counters = store.collection(Counter.self)
      try counters.save(Counter(id: 1, value: 1))
      let updated = try counters.update(id: 1) { counter in
        do {
          try counters.save(Counter(id: 2, value: 2))
          Issue.record("a save inside update did not throw")
        } catch CaskError.reentrantCall {
        } catch {
          Issue.record("a save inside update threw \(error), not reentrantCall")
        }
        counter.value = 10
      }
      #expect(updated?.value == 10)
      #expect(try counters.get(id: 1)?.value == 10)
      #expect(try counters.get(id: 2) == nil)
    }
  }
}
