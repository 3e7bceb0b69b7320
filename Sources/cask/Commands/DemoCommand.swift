import CaskCLIKit
import CipherCask
import Foundation

/// `cask demo [DIR]`: the quick start. Imports the bundled sample of events into a new
/// store, queries, updates and deletes some, and shows what the store looks like after.
enum DemoCommand: Subcommand {
  static var spec: CommandSpec { .demo }

  static let fixedPassword = "cask-demo"
  static let city = "Lisbon"
  static let movedVenue = (from: "Old Port Shed", to: "Old Port Warehouse")

  static func run(_ arguments: ParsedArguments) throws {
    let started = ContinuousClock.now
    let path = arguments.optionalArgument("dir") ?? "cask-demo"
    let explicit = try PasswordSource.explicitPassword(arguments)
    let password = explicit ?? fixedPassword
    var out = "CipherCask demo: an encrypted store of events in '\(path)'.\n"
    if explicit == nil {
      out += "Password: '\(fixedPassword)' (the fixed demo password; real stores take theirs from "
      out += "--password-file, CASK_PASSWORD, --password-stdin or a prompt).\n"
    }
    StandardStream.output.write(out + "\n")
    let store = try StoreAccess.open(path, password: password, options: StoreAccess.options(.readWrite, create: true))
    let firstID = try StoreAccess.run(store) { store in try tour(store, path: path) }
    let elapsed = (ContinuousClock.now - started).components
    let seconds = Double(elapsed.seconds) + Double(elapsed.attoseconds) * 1e-18
    // Commands that run as printed: this executable as the shell would find it, the paths quoted.
    let cask = (explicit == nil ? "CASK_PASSWORD=\(fixedPassword) " : "") + DemoInvocation.command()
    let directory = DemoInvocation.shellWord(path)
    var next = "Done in \(String(format: "%.1f", seconds)) s. "
    next += "Look around:\n"
    next += "  \(cask) keys \(directory) --collection events | head\n"
    if let firstID { next += "  \(cask) get \(directory) \(DemoInvocation.shellWord(firstID)) --collection events\n" }
    // The fixed demo password is public: its export may reuse it (an export asks for its own
    // password otherwise, at the terminal when the hint is run).
    let reuse = explicit == nil ? " --reuse-store-password" : ""
    next +=
      "  \(cask) export \(directory) \(DemoInvocation.shellWord(path + "-export")) --collection events\(reuse)\n"
    next += "  \(cask) verify \(directory)\n"
    StandardStream.output.write(next)
  }

  /// The steps, each printed as it is done. Returns the id of an event still in the store.
  private static func tour(_ store: CaskStore, path: String) throws -> String? {
    let events = store.collection(DemoEvent.self, named: "events")
    let now = Date()

    let imported = try events.importJSON(Data(demoEventsJSON.utf8), decoder: .demoEvents)
    say(
      "1. Imported the bundled sample into the collection 'events' (one atomic batch): "
        + "\(imported.inserted) inserted, \(imported.replaced) replaced.")

    let inCity = try events.fetch(where: { $0.city == city }, sortedBy: { $0.date < $1.date })
    let upcoming = inCity.filter { $0.date >= now }
    say(
      "2. Filtered by city: \(inCity.count) events in \(city), \(upcoming.count) of them still to come. The next three:"
    )
    let dateFormat = Date.ISO8601FormatStyle().year().month().day()
    for event in upcoming.prefix(3) {
      say("     \(event.date.formatted(dateFormat))  \(event.title) at \(event.venue)")
    }

    let moved = try events.updateAll(where: { $0.venue == movedVenue.from }, { $0.venue = movedVenue.to })
    say("3. The venue '\(movedVenue.from)' is now '\(movedVenue.to)': \(moved) events updated in one atomic batch.")

    let over = try events.deleteAll(where: { $0.date < now })
    say("4. Deleted \(over) events that are already over, in one atomic batch; \(events.count) events remain.")

    let exposed = try plaintextAppears(city, in: path)
    say(
      "5. Everything on disk is encrypted: the word '\(city)' appears "
        + (exposed ? "IN the store's files (unexpected!)." : "nowhere in the store's files."))

    say("\nThe store now:")
    StandardStream.output.write(StatsCommand.text(StatsCommand.report(store, path: path)) + "\n")
    return try events.ids().first
  }

  private static func say(_ line: String) {
    StandardStream.output.write(line + "\n")
  }

  /// Whether `word` occurs in any file of the store directory.
  private static func plaintextAppears(_ word: String, in path: String) throws -> Bool {
    let needle = Data(word.utf8)
    for name in try FileManager.default.contentsOfDirectory(atPath: path) {
      let contents = try Data(contentsOf: URL(fileURLWithPath: "\(path)/\(name)"))
      if contents.range(of: needle) != nil { return true }
    }
    return false
  }
}
