// Defines a name the including file defined already.
#pragma sigdef journal random temp
