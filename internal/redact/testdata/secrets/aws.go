package cloud

// Hard-coded credentials: a finding in their own right.
const accessKeyID = "AKIA5XRILAV5FVCYK43K"

var sessionKey = "ASIAKPDHIEYGSNO2FRNZ"

func client() *Config {
	return &Config{AccessKey: accessKeyID, SecretKey: "JRfza0hW/rdE2oapzzQbkrck+z1iYylswfgItIep"}
}
