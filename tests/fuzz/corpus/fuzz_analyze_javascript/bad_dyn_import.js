const name = "fs";
import(name);
require(name);
