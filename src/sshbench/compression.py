"""What a Combination asks of ssh's compression (`Combination.compression`, swept by `--compression`): plain
data at the bottom of the layers, shared by the records (results.py) and the settings that parse the option
(settings.py), so that neither imports the other for it."""

NO_COMPRESSION = "none"
ZLIB = "zlib@openssh.com"
