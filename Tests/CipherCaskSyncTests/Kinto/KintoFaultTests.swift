import CaskTestSupport
import CipherCask
import Foundation
import XCTest

@testable import CipherCaskSync

/// Failures between a device and Kinto: each ends converged with nothing lost, or with a
/// clear error and the changes still marked. A fault proxy stands between them.
final class KintoFaultTests: XCTestCase {
  func testA503WithRetryAfterIsWaitedOutAndRetried() async throws {
    let kinto = try KintoProcess()
    let proxy = try FaultProxy(targetPort: kinto.port)
    let device = try Device("retry", url: proxy.url)
    try device.save(Note(id: "r", title: "r", count: 1))
    try await proxy.add(rule: ["status": 503, "retry_after": 1, "count": 2, "match": "/batch"])
    let events = device.sync.events
    let started = ContinuousClock.now
    let report = try await device.sync.sync()
    XCTAssertEqual(report.pushed, 1)
    XCTAssertGreaterThanOrEqual(ContinuousClock.now - started, .seconds(2), "Retry-After: 1, twice")
    var retries = 0
    for await event in events {
      if case .retrying = event { retries += 1 }
      if case .finished = event { break }
    }
    XCTAssertEqual(retries, 2)
    let server = try await KintoHTTP(kinto.url).notes()
    XCTAssertEqual(server["r"]?.title, "r")
  }

  func testARefusalIsNotRetried() async throws {
    let kinto = try KintoProcess()
    let proxy = try FaultProxy(targetPort: kinto.port)
    let device = try Device("refused", url: proxy.url)
    try device.save(Note(id: "x", title: "x", count: 1))
    try await proxy.add(rule: ["status": 403, "count": 1, "match": "/batch"])
    do {
      try await device.sync.sync()
      XCTFail("a 403 must fail the sync: one retry would have passed")
    } catch SyncError.http(let status, _) {
      XCTAssertEqual(status, 403)
    }
    let pending = try await device.pending()
    XCTAssertEqual(pending, 1, "the change stays marked")
    let report = try await device.sync.sync()
    XCTAssertEqual(report.pushed, 1)
  }

  func testAnUnreachableServerFailsClearlyAndKeepsTheChanges() async throws {
    let port = try KintoProcess.freePort()
    let device = try Device(
      "offline", url: URL(string: "http://127.0.0.1:\(port)/v1")!,
      retry: RetryPolicy(attempts: 3, baseDelay: 0.01, maximumDelay: 0.05))
    try device.save(Note(id: "o", title: "offline", count: 1))
    do {
      try await device.sync.sync()
      XCTFail("an unreachable server must fail the sync")
    } catch SyncError.transport(let reason) {
      XCTAssertEqual(reason, "could not connect to the server")
    }
    let pending = try await device.pending()
    XCTAssertEqual(pending, 1)
    XCTAssertEqual(try device.get("o")?.title, "offline")
  }

  func testTheServerStoppingMidPullThenRestartingLosesNothing() async throws {
    let kinto = try KintoProcess()
    let proxy = try FaultProxy(targetPort: kinto.port)
    let writer = try Device("writer", url: kinto.url)
    for index in 0..<30 { try writer.save(Note(id: "m\(index)", title: "t\(index)", count: index)) }
    try await writer.sync.sync()
    let reader = try Device(
      "reader", url: proxy.url, retry: RetryPolicy(attempts: 2, baseDelay: 0.01, maximumDelay: 0.05))
    try await proxy.add(rule: ["die_after": 2, "match": "/records"])  // the second page's answer is lost
    do {
      try await reader.sync.sync()
      XCTFail("the sync must fail while the server is down")
    } catch SyncError.transport {}
    let partial = try reader.all().count
    XCTAssertGreaterThan(partial, 0, "the first page was stored")
    XCTAssertLessThan(partial, 30)
    try proxy.restart()
    let report = try await reader.sync.sync()
    XCTAssertEqual(try reader.all(), try writer.all())
    XCTAssertEqual(report.pulled, 30 - partial, "no page fetched twice is stored twice")
  }

  func testAnInterruptedIncrementalPullResumesAfterTheLastStoredPage() async throws {
    let kinto = try KintoProcess()
    let proxy = try FaultProxy(targetPort: kinto.port)
    let reader = try Device(
      "incremental", url: proxy.url, retry: RetryPolicy(attempts: 2, baseDelay: 0.01, maximumDelay: 0.05))
    try reader.save(Note(id: "seed", title: "seed", count: 0))
    try await reader.sync.sync()
    try await reader.sync.sync()  // its own push comes back once
    let other = KintoHTTP(kinto.url)
    for index in 0..<25 { try await other.put(Note(id: "i\(index)", title: "server \(index)", count: index)) }
    let cursor = try XCTUnwrap(try reader.sync.ledger.state(in: reader.store)?.cursor)
    // The HEAD and the first page get through, the second page's answer is lost.
    try await proxy.add(rule: ["die_after": 3, "match": "/records"])
    do {
      try await reader.sync.sync()
      XCTFail("the sync must fail while the server is down")
    } catch SyncError.transport {}
    let stored = try reader.all().count - 1
    XCTAssertEqual(stored, 7, "one page of 7 was stored")
    let moved = try XCTUnwrap(try reader.sync.ledger.state(in: reader.store)?.cursor)
    XCTAssertGreaterThan(moved, cursor, "the cursor moved with the stored page")
    try proxy.restart()
    let report = try await reader.sync.sync()
    XCTAssertFalse(report.fullResync)
    XCTAssertEqual(report.pulled, 25 - 7, "resumed after the stored page: no gap, no page twice")
    let held = try await other.notes()
    XCTAssertEqual(try reader.all(), held)
  }

  func testTheServerStoppingMidPushThenRestartingLosesNothing() async throws {
    let kinto = try KintoProcess(batchLimit: 4)
    let proxy = try FaultProxy(targetPort: kinto.port)
    let device = try Device("pusher", url: proxy.url, retry: RetryPolicy(attempts: 2, baseDelay: 0.01))
    try await device.sync.sync()
    for index in 0..<10 { try device.save(Note(id: "p\(index)", title: "t\(index)", count: index)) }
    // The second batch is applied by the server but its answer is lost with the server.
    try await proxy.add(rule: ["die_after": 2, "match": "/batch"])
    do {
      try await device.sync.sync()
      XCTFail("the sync must fail while the server is down")
    } catch SyncError.transport {}
    let pendingAfterFailure = try await device.pending()
    XCTAssertEqual(pendingAfterFailure, 6, "only the first batch was confirmed")
    try proxy.restart()
    let report = try await device.sync.sync()
    XCTAssertEqual(report.conflicts.count, 0, "a change the server applied without answering is no conflict")
    let pending = try await device.pending()
    XCTAssertEqual(pending, 0)
    let server = try await KintoHTTP(kinto.url).notes()
    XCTAssertEqual(server, try device.all())
    XCTAssertEqual(server.count, 10)
  }

  func testPurgedTombstonesTriggerAFullResyncThatRemovesWhatTheServerLost() async throws {
    let kinto = try KintoProcess()
    let proxy = try FaultProxy(targetPort: kinto.port)
    let device = try Device("purged", url: proxy.url)
    for index in 0..<5 { try device.save(Note(id: "q\(index)", title: "t", count: index)) }
    try await device.sync.sync()
    try await device.sync.sync()
    let other = KintoHTTP(kinto.url)
    try await other.delete("q1")
    try await other.delete("q2")
    try await other.put(Note(id: "q3", title: "changed", count: 33))
    try device.save(Note(id: "local", title: "unsent", count: 0))
    // What `kinto purge-deleted` does to a listing: the tombstones are gone from `_since`.
    try await proxy.add(rule: ["strip_tombstones": true, "match": "/records"])
    let report = try await device.sync.sync()
    XCTAssertTrue(report.fullResync, "the record count gave the purge away")
    XCTAssertEqual(report.deleted, 2)
    XCTAssertEqual(Set(try device.all().keys), ["q0", "q3", "q4", "local"])
    XCTAssertEqual(try device.get("q3")?.title, "changed")
    let server = try await other.notes()
    XCTAssertEqual(server, try device.all(), "the unsent object was kept and sent")
  }

  func testBackoffIsObeyed() async throws {
    let kinto = try KintoProcess(backoff: 1)
    let device = try Device("backoff", url: kinto.url)
    try device.save(Note(id: "b", title: "b", count: 1))
    let started = ContinuousClock.now
    let report = try await device.sync.sync()
    // Every answer asks for a second's pause before the next request.
    XCTAssertGreaterThanOrEqual(ContinuousClock.now - started, .seconds(report.requests - 1))
    XCTAssertEqual(report.pushed, 1)
  }

  func testCancellationEndsTheRetriesAtOnce() async throws {
    let kinto = try KintoProcess()
    let proxy = try FaultProxy(targetPort: kinto.port)
    let device = try Device("cancel", url: proxy.url, retry: RetryPolicy(attempts: 5, baseDelay: 0.1, maximumDelay: 30))
    try device.save(Note(id: "c", title: "c", count: 1))
    try await proxy.add(rule: ["status": 503, "retry_after": 20, "count": 5])
    let sync = device.sync
    let task = Task { try await sync.sync() }
    try await Task.sleep(for: .milliseconds(500))
    let started = ContinuousClock.now
    task.cancel()
    do {
      _ = try await task.value
      XCTFail("a cancelled sync must throw")
    } catch SyncError.cancelled {}
    XCTAssertLessThan(ContinuousClock.now - started, .seconds(5))
    let pending = try await device.pending()
    XCTAssertEqual(pending, 1)
  }
}
