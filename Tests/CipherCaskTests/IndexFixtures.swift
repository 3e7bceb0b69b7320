import CaskTestSupport
import CipherCask
import Foundation

/// A model with one field of each indexable kind, for the index tests.
struct Gig: Codable, Identifiable, Sendable, Equatable {
  var id: String
  var city: String
  var date: Date
  var seats: Int
  var price: Double
  var sold: Bool
  var email: String?
  var rank: Int?
  var attendees: [String]
}

extension Gig {
  static func make(_ id: String, city: String = "Lisbon", day: Double = 0, seats: Int = 10, email: String? = nil)
    -> Gig
  {
    Gig(
      id: id, city: city, date: Date(timeIntervalSinceReferenceDate: day * 86_400), seats: seats,
      price: Double(seats) / 4, sold: seats % 2 == 0, email: email, rank: seats % 3 == 0 ? nil : seats,
      attendees: [])
  }
}

extension CaskStore {
  /// The gigs collection with an index on each field, and with `composites` two composite
  /// indexes as well: (city, date) and (city, seats).
  func gigs(named name: String = "gigs", composites: Bool = false) -> CaskCollection<Gig> {
    let single: [CaskIndex<Gig>] = [
      .index("city", \.city), .index("date", \.date), .index("seats", \.seats), .index("price", \.price),
      .index("sold", \.sold), .index("rank", \.rank), .index("attendee", each: \.attendees),
      .unique("email", \.email),
    ]
    let composite: [CaskIndex<Gig>] = [.index("cityDate", \.city, \.date), .index("citySeats", \.city, \.seats)]
    return collection(Gig.self, named: name, indexes: composites ? single + composite : single)
  }
}

/// Opens a store in a fresh directory for `body`, and removes it after.
func withIndexStore(
  _ label: String = "indexes", options: CaskStore.Options = .init(durability: .never),
  _ body: (CaskStore, TemporaryDirectory) throws -> Void
) throws {
  let directory = try TemporaryDirectory(label)
  defer { directory.remove() }
  let store = try CaskStore(path: directory.file("s.cask"), password: "pw", options: options)
  defer { try? store.close() }
  try body(store, directory)
}
