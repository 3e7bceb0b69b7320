import Foundation

/// The Event model of a Core Data events example, as the demo stores it.
struct DemoEvent: Codable, Identifiable, Sendable {
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
  /// How the sample is written: snake_case keys, ISO 8601 dates.
  static var demoEvents: JSONDecoder {
    let decoder = JSONDecoder()
    decoder.keyDecodingStrategy = .convertFromSnakeCase
    decoder.dateDecodingStrategy = .iso8601
    return decoder
  }
}
