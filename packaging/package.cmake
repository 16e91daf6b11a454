# packaging/package.cmake: `cpack -G DEB` from the build directory builds the .deb of the
# command: /usr/bin/mssql-cdc, its man page, the systemd unit (packaging/mssql-cdc.service)
# and an example config of `mssql-cdc run` (packaging/tables.yaml). The library, its
# headers and mcdc.pc are the "dev" component, left out of the .deb. Library dependencies
# come from dpkg-shlibdeps. Checked on a fresh Debian 12: scripts/check-deb.
install(FILES ${CMAKE_SOURCE_DIR}/packaging/mssql-cdc.service
        DESTINATION lib/systemd/system COMPONENT runtime)
install(FILES ${CMAKE_SOURCE_DIR}/packaging/tables.yaml
        DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/doc/mssql-cdc/examples COMPONENT runtime)

set(CPACK_PACKAGE_NAME mssql-cdc)
set(CPACK_PACKAGE_VENDOR "mssql-cdc")
set(CPACK_PACKAGE_CONTACT "mssql-cdc maintainers <mssql-cdc@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "SQL Server change data capture into Delta Lake tables")
set(CPACK_PACKAGE_DESCRIPTION "mssql-cdc streams the change tables of SQL Server CDC into
 Delta Lake bronze tables exactly once, with ingestion facts, finalization verdicts and
 silver tables; `mssql-cdc run` runs every table of a config as a systemd service.")
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_COMPONENTS_ALL runtime)
# the runtime component only, in one package
set(CPACK_INSTALL_CMAKE_PROJECTS "${CMAKE_BINARY_DIR};mssql-cdc;runtime;/")
set(CPACK_DEB_COMPONENT_INSTALL OFF)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION database)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "tzdata")
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "tdsodbc, unixodbc")
include(CPack)
