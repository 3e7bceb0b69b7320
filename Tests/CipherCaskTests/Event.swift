import Foundation

/// The Core Data events example's Event model, as an app would write it today.
struct Event: Codable, Identifiable, Sendable, Equatable {
  var title: String
  var date: Date
  var venue: String
  var city: String
  var country: String
  var attendees: [String]
  var fbUrl: URL?
  var ticketUrl: URL?
  var eventId: String

  var id: String { eventId }
}

extension JSONDecoder {
  /// How the Core Data events example's JSON is written: snake_case keys, ISO 8601 dates.
  static var events: JSONDecoder {
    let decoder = JSONDecoder()
    decoder.keyDecodingStrategy = .convertFromSnakeCase
    decoder.dateDecodingStrategy = .iso8601
    return decoder
  }
}

let sampleEventsJSON = Data(
  """
  [
    {"title": "Swift Meetup", "date": "2026-03-01T18:00:00Z", "venue": "Hall A", "city": "Amsterdam",
     "country": "NL", "attendees": ["ann", "bob"], "fb_url": "https://example.com/fb/1",
     "ticket_url": "https://example.com/t/1", "eventId": "e1"},
    {"title": "Storage Night", "date": "2026-04-02T19:30:00Z", "venue": "Loft", "city": "Utrecht",
     "country": "NL", "attendees": [], "fb_url": "https://example.com/fb/2",
     "ticket_url": "https://example.com/t/2", "eventId": "e2"},
    {"title": "Crypto Talk", "date": "2025-12-24T10:00:00Z", "venue": "Hall B", "city": "Amsterdam",
     "country": "NL", "attendees": ["carol"], "fb_url": "https://example.com/fb/3",
     "ticket_url": "https://example.com/t/3", "eventId": "e3"}
  ]
  """.utf8)
