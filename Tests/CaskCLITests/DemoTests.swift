import CipherCask
import Foundation
import Testing

/// `cask demo`: the quick start runs offline and leaves a store the other commands open.
@Suite("cask demo")
struct DemoTests {
  @Test("demo imports the sample, filters, updates, deletes and prints the stats")
  func demo() throws {
    let cask = try CaskRunner("demo")
    defer { cask.remove() }
    let result = try cask.run(["demo"])
    #expect(result.status == 0, "\(result.err)")
    #expect(result.stderr.isEmpty)
    let out = result.out
    #expect(out.contains("Password: 'cask-demo'"))
    #expect(
      out.contains(
        "1. Imported the bundled sample into the collection 'events' (one atomic batch): 300 inserted, 0 replaced."))
    #expect(out.contains("2. Filtered by city: 43 events in Lisbon"))
    #expect(out.contains("3. The venue 'Old Port Shed' is now 'Old Port Warehouse': 18 events updated"))
    #expect(out.contains("5. Everything on disk is encrypted: the word 'Lisbon' appears nowhere"))
    #expect(out.contains("Collections:  1\n  events: "))

    // The default directory, opened by the other commands with the printed password.
    let store = cask.path("cask-demo")
    let opened = try CaskStore(path: store, password: "cask-demo", options: CaskStore.Options(createIfMissing: false))
    let remaining = opened.count(inGroup: "events")
    try opened.close()
    #expect(remaining > 0 && remaining < 300)
    #expect(out.contains("; \(remaining) events remain."))
    let verify = try cask.run(["verify", "cask-demo"], password: "cask-demo")
    #expect(verify.status == 0)

    let again = try cask.run(["demo", "elsewhere"], password: "own-password")
    #expect(again.status == 0)
    #expect(!again.out.contains("Password:"))
    #expect(try cask.run(["keys", "elsewhere"], password: "own-password").status == 0)
    #expect(try cask.run(["keys", "elsewhere"], password: "cask-demo").status == 1)
  }
}
